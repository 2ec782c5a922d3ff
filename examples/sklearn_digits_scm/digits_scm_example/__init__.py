"""cfcheck's SCM suites on scikit-learn's handwritten digits, with attributes measured from the pixels."""
