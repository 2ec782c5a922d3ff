"""cfcheck on real data: scikit-learn's bundled handwritten digits (see ../README.md)."""
