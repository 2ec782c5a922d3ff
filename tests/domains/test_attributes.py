"""A user's domain declares its attributes, their table and the causal graph: what is read, and
one clear error per mistake naming the attribute, the row or file, and what was expected
(:mod:`cfcheck.domains.attributes`, :mod:`cfcheck.domains.attributes_table`)."""

from __future__ import annotations

import csv
import re

import numpy as np
import pytest
import torch

from cfcheck.domains.attributes import Attributes, CausalGraph, binary, categorical, continuous
from cfcheck.domains.attributes_mechanisms import Mechanism
from cfcheck.domains.attributes_table import read_columns
from cfcheck.domains.data import ArraySource, FolderSource, ImageDomain
from cfcheck.domains.registry import DomainError

N = 40


def _source(n=N, seed=0):
    """Images whose grey level is their row's ``grey`` attribute times 10/255 (so a row's image can be
    recognised from its pixels), labels alternating."""
    grey = np.arange(n) % 25
    images = np.repeat(grey[:, None, None, None] * 10, 16, axis=2).reshape(n, 1, 4, 4).astype(np.uint8)
    return ArraySource(images, np.arange(n) % 2, name="greys"), grey


def _declared():
    return [continuous("grey", bins=4), binary("odd"), categorical("site", values=("north", "south", "east"))]


def _table(grey):
    return {
        "grey": grey.astype(float),
        "odd": grey % 2,
        "site": np.array(["north", "south", "east"])[np.arange(len(grey)) % 3],
    }


def _tree(root, per_class=10):
    """A class-per-folder tree of 4×4 grey PNGs; image ``<class>/<i>.png`` has grey level 10·(i + per_class·class)."""
    from PIL import Image

    for label, name in enumerate(("dark", "light")):
        (root / name).mkdir(parents=True)
        for i in range(per_class):
            level = 10 * (i + per_class * label)
            Image.fromarray(np.full((4, 4), level, dtype=np.uint8), "L").save(root / name / f"{i:03d}.png")
    return root


def _write_csv(path, header, rows):
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


# -- declarations and the graph ---------------------------------------------------------------
def test_the_graph_orders_parents_before_children_and_knows_descendants():
    graph = CausalGraph(("y", "m", "a", "r"), {"y": ("m", "r"), "m": ("a",)})
    assert graph.order == ("a", "m", "r", "y")  # each step: the first declared attribute whose parents are placed
    assert graph.roots() == ("a", "r")
    assert graph.descendants("a") == {"m", "y"}
    assert graph.descendants("m") == {"y"}
    assert graph.descendants("y") == frozenset()
    assert graph.descendants("r") == {"y"}


@pytest.mark.parametrize(
    ("edges", "cycle"),
    [
        ({"a": ("a",)}, "a → a"),
        ({"m": ("a",), "a": ("m",)}, "a → m → a"),
        ({"m": ("a",), "y": ("m",), "a": ("y",)}, "a → m → y → a"),
    ],
)
def test_a_cycle_is_refused_naming_it(edges, cycle):
    with pytest.raises(DomainError) as raised:
        CausalGraph(("a", "m", "y"), edges)
    message = str(raised.value)
    assert "causal graph: the cycle" in message and "expected a DAG" in message
    # the cycle is named as a closed path of causes (its starting point may be any of its members)
    named = re.search(r"the cycle (.+?);", message).group(1).split(" → ")
    expected = cycle.split(" → ")
    assert named[0] == named[-1] and len(named) == len(expected)
    assert set(named) == set(expected)
    for cause, effect in zip(named, named[1:]):
        assert cause in edges.get(effect, ()), (cause, effect, message)


def test_an_unknown_attribute_in_the_graph_is_named():
    with pytest.raises(
        DomainError,
        match=r"the edge\(s\) into 'odd' name unknown attribute\(s\) \['age'\]; the declared attributes are \['grey', 'odd', 'site'\]",
    ):
        Attributes(_declared(), table={}, graph={"odd": ("grey", "age")})
    with pytest.raises(DomainError, match=r"into 'smile' name unknown attribute\(s\) \['smile'\]"):
        Attributes(_declared(), table={}, graph={"smile": ("grey",)})


def test_a_parents_string_instead_of_a_list_is_refused():
    with pytest.raises(
        DomainError, match="the parents of 'odd' must be a list of attribute names, got the string 'grey'"
    ):
        Attributes(_declared(), table={}, graph={"odd": "grey"})


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda: continuous("age", bins=1), "continuous attribute 'age': bins=1 leaves a single bin"),
        (lambda: continuous("age", bins=[0.0, 1.0]), r"the edges \[0.0, 1.0\] make 1 bin\(s\)"),
        (lambda: continuous("age", bins=[0.0, 2.0, 1.0]), "bin edges must be finite and strictly increasing"),
        (lambda: continuous("age", bins=[0.0, float("inf"), 9.0]), "bin edges must be finite and strictly increasing"),
        (lambda: categorical("site", values=("a",)), "categorical attribute 'site': expected at least 2 values"),
        (lambda: categorical("site", values=("a", "b", "a")), "values 'a' are given more than once"),
        (lambda: categorical("site"), "give either values=.* or count=k"),
        (lambda: categorical("site", count=1), "count must be an int >= 2, got 1"),
    ],
)
def test_a_declaration_that_leaves_a_single_bin_or_is_malformed_is_refused(make, expected):
    with pytest.raises(DomainError, match=expected):
        make()


def test_a_mechanism_for_a_root_or_an_unknown_attribute_or_without_predict_is_refused():
    good = Mechanism(abduct=lambda v, pa: v, predict=lambda u, pa: u)
    with pytest.raises(
        DomainError, match="mechanisms: 'grey' has no parents in the causal graph, so it needs no mechanism"
    ):
        Attributes(_declared(), table={}, graph={"odd": ("grey",)}, mechanisms={"grey": good})
    with pytest.raises(DomainError, match="mechanisms: 'age' is not a declared attribute"):
        Attributes(_declared(), table={}, graph={"odd": ("grey",)}, mechanisms={"age": good})
    with pytest.raises(
        DomainError,
        match=r"the mechanism of 'odd' must have abduct\(values, parents\) and predict\(noise, parents\).*got function",
    ):
        Attributes(_declared(), table={}, graph={"odd": ("grey",)}, mechanisms={"odd": lambda v: v})


def test_an_attribute_declared_twice_is_refused():
    with pytest.raises(DomainError, match=r"attributes: \['grey'\] declared more than once"):
        Attributes([continuous("grey"), binary("grey")], table={})


# -- the table ------------------------------------------------------------------------------------
def test_an_array_table_is_read_in_the_images_order_with_codes_for_discrete_values():
    source, grey = _source()
    columns = read_columns(_declared(), _table(grey), source)
    assert columns["grey"].dtype == torch.float32 and columns["grey"].tolist() == grey.astype(float).tolist()
    assert columns["odd"].dtype == torch.int64 and columns["odd"].tolist() == (grey % 2).tolist()
    assert columns["site"].tolist() == (np.arange(N) % 3).tolist()  # the index of the value in values


def test_an_npz_and_a_csv_table_read_the_same_as_the_arrays(tmp_path):
    source, grey = _source()
    table = _table(grey)
    np.savez(tmp_path / "attributes.npz", **table, images=np.zeros((3, 2)))  # other arrays are ignored
    rows = [[f"{g:.1f}", "true" if o else "false", s] for g, o, s in zip(table["grey"], table["odd"], table["site"])]
    _write_csv(tmp_path / "attributes.csv", ["grey", "odd", "site", "comment"], [[*r, "x"] for r in rows])
    expected = read_columns(_declared(), table, source)
    for path in (tmp_path / "attributes.npz", tmp_path / "attributes.csv"):
        found = read_columns(_declared(), str(path), source)
        assert {k: v.tolist() for k, v in found.items()} == {k: v.tolist() for k, v in expected.items()}, path


@pytest.mark.parametrize(
    ("cells", "codes"),
    [(["0", "1"], [0, 1]), (["False", "TRUE"], [0, 1]), (["no", "yes"], [0, 1]), (["0.0", "1.0"], [0, 1])],
)
def test_binary_cells_may_be_spelled_several_ways(tmp_path, cells, codes):
    source, _ = _source(n=2)
    path = _write_csv(tmp_path / "t.csv", ["odd"], [[c] for c in cells])
    assert read_columns([binary("odd")], path, source)["odd"].tolist() == codes


def test_a_table_not_aligned_with_the_images_names_both_counts():
    source, grey = _source()
    table = {k: v[:-1] for k, v in _table(grey).items()}
    with pytest.raises(
        DomainError,
        match=r"the attribute table \(arrays\): 39 rows, but greys holds 40 images; expected one row per image, in the images' order",
    ):
        read_columns(_declared(), table, source)
    with pytest.raises(DomainError, match="39 rows, but greys holds 40 images"):
        ImageDomain("d", source, root="unused", model_roles={}, attributes=Attributes(_declared(), table=table))


def test_columns_of_different_lengths_are_named():
    source, grey = _source()
    table = {**_table(grey), "odd": (grey % 2)[:30]}
    with pytest.raises(DomainError, match=r"columns differ in length \{'grey': 40, 'odd': 30, 'site': 40\}"):
        read_columns(_declared(), table, source)


def test_a_missing_column_is_named_with_what_the_table_holds(tmp_path):
    source, grey = _source()
    table = _table(grey)
    del table["site"]
    np.savez(tmp_path / "a.npz", **table)
    with pytest.raises(
        DomainError, match=r"a.npz: no column for attribute\(s\) \['site'\]; it holds \['grey', 'odd'\]"
    ):
        read_columns(_declared(), tmp_path / "a.npz", source)


def test_a_binary_column_holding_2_names_the_row():
    source, grey = _source()
    table = _table(grey)
    table["odd"] = table["odd"].copy()
    table["odd"][7] = 2
    with pytest.raises(
        DomainError, match=r"attribute 'odd' \(binary\) is 2 in row 7; expected 0 or 1 \(or true/false, yes/no\)"
    ):
        read_columns(_declared(), table, source)


def test_an_undeclared_categorical_value_names_the_csv_line(tmp_path):
    source, grey = _source(n=4)
    path = _write_csv(
        tmp_path / "t.csv", ["grey", "odd", "site"], [[1, 0, "north"], [2, 1, "west"], [3, 0, "east"], [4, 1, "up"]]
    )
    with pytest.raises(DomainError) as raised:
        read_columns(_declared(), path, source)
    assert str(raised.value) == (
        f"{path}: attribute 'site' (categorical) is 'west' in line 3, 'up' in line 5; "
        "expected one of ['north', 'south', 'east']"
    )


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_a_non_finite_continuous_value_names_the_row(bad):
    source, grey = _source()
    table = _table(grey)
    table["grey"][3] = bad
    with pytest.raises(
        DomainError,
        match=rf"attribute 'grey' \(continuous\) is {bad!r} in row 3; expected a finite number in every row",
    ):
        read_columns(_declared(), table, source)


def test_an_empty_or_text_cell_of_a_continuous_column_is_named(tmp_path):
    source, _ = _source(n=5)
    rows = [["1.5", 0], ["", 1], ["2", 0], ["abc", 1], ["3", 0]]
    path = _write_csv(tmp_path / "t.csv", ["grey", "odd"], rows)
    with pytest.raises(
        DomainError,
        match=r"attribute 'grey' \(continuous\) is empty in line 3, 'abc' in line 5; expected a finite number",
    ):
        read_columns([continuous("grey"), binary("odd")], path, source)


def test_more_than_three_bad_rows_are_counted():
    source, grey = _source()
    table = _table(grey)
    table["odd"] = np.full(N, 5)
    with pytest.raises(DomainError, match=r"is 5 in row 0, 5 in row 1, 5 in row 2 and 37 more rows; expected 0 or 1"):
        read_columns(_declared(), table, source)


def test_a_value_declared_but_held_by_no_row_is_refused():
    source, grey = _source()
    table = _table(grey)
    table["site"] = np.where(table["site"] == "east", "north", table["site"])
    with pytest.raises(
        DomainError, match=r"attribute 'site' \(categorical\): no row of the table holds the value\(s\) \['east'\]"
    ):
        ImageDomain("d", source, root="unused", model_roles={}, attributes=Attributes(_declared(), table=table))


def test_quantile_bins_that_collapse_into_one_are_refused():
    source, grey = _source()
    table = {**_table(grey), "grey": np.full(N, 3.0)}
    with pytest.raises(
        DomainError,
        match=r"continuous attribute 'grey': its 4 quantile bins collapse into a single bin \(the table's values span only 3..3",
    ):
        ImageDomain("d", source, root="unused", model_roles={}, attributes=Attributes(_declared(), table=table))


def test_quantile_bins_on_ties_merge_equal_edges_but_keep_two_or_more():
    source, grey = _source()
    table = {**_table(grey), "grey": np.where(np.arange(N) < 30, 0.0, np.arange(N).astype(float))}  # 75 % zeros
    domain = ImageDomain("d", source, root="unused", model_roles={}, attributes=Attributes(_declared(), table=table))
    # the quartiles of 30 zeros and 30..39 are 0, 0, 0, 7.5 (between the 30th and 31st value), 39
    assert domain._scm.edges["grey"].tolist() == [0.0, 7.5, 39.0]


def test_a_mapping_of_sources_needs_a_table_per_source():
    source, grey = _source()
    data = {"train": source, "test": _source(seed=1)[0]}
    with pytest.raises(
        DomainError,
        match=r"the domain's data is a mapping of sources \['test', 'train'\]; expected its attribute table as a mapping of the same keys",
    ):
        ImageDomain("d", data, root="unused", model_roles={}, attributes=Attributes(_declared(), table=_table(grey)))


def test_a_mapping_of_sources_reads_each_sources_table():
    (train, grey), (test, _) = _source(), _source(n=20)
    test_grey = 24 - np.arange(20)  # the test images' own values, in their own order
    tables = {
        "train": _table(grey),
        "test": {**_table(test_grey), "site": np.array(["north", "south", "east"] * 7)[:20]},
    }
    domain = ImageDomain(
        "d",
        {"train": train, "test": test},
        root="unused",
        model_roles={},
        attributes=Attributes(_declared(), table=tables),
    )
    scored = domain.split("scored")
    assert domain.parents("scored", torch.arange(len(scored)))["grey"].tolist() == test_grey.astype(float).tolist()


# -- a folder source ------------------------------------------------------------------------------
def test_a_folder_csv_is_matched_by_relative_path_in_any_order_with_extra_rows(tmp_path):
    root = _tree(tmp_path / "tree")
    images = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.png"))
    from PIL import Image

    rows = []
    for name in images:  # each image's attributes from its own pixels: grey level, and whether level/10 is odd
        level = int(np.asarray(Image.open(root / name)).mean())
        rows.append([name, level, level // 10 % 2, ("north", "south", "east")[level // 10 % 3]])
    rows = rows[::-1] + [["gone/999.png", 5, 7, "nowhere"]]  # reversed; a row of no image of the tree is not read
    path = _write_csv(tmp_path / "attributes.csv", ["file", "grey", "odd", "site"], rows)
    fractions = {"train": 0.3, "oracle_train": 0.1, "selection": 0.2, "scored": 0.2, "reference": 0.2}
    domain = ImageDomain(
        "tree",
        FolderSource(root, mode="L"),
        root=tmp_path / "d",
        model_roles={},
        fractions=fractions,
        attributes=Attributes(_declared(), table=path),
    )
    for role in ("train", "scored", "reference"):
        split = domain.split(role)
        parents = domain.parents(role, torch.arange(len(split)))
        grey_of_pixels = (split.images.mean((1, 2, 3)) * 255).round()
        assert parents["grey"].tolist() == grey_of_pixels.tolist(), role
        assert parents["odd"].tolist() == (grey_of_pixels // 10 % 2).long().tolist()


def test_a_folder_image_missing_from_the_csv_is_named(tmp_path):
    root = _tree(tmp_path / "tree")
    images = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.png"))
    rows = [[name, 1.0 + i, i % 2, "north"] for i, name in enumerate(images) if name != "light/003.png"]
    path = _write_csv(tmp_path / "attributes.csv", ["file", "grey", "odd", "site"], rows)
    with pytest.raises(DomainError) as raised:
        read_columns(_declared(), path, FolderSource(root, mode="L"))
    assert str(raised.value) == (
        f"{path}: no row for 1 of the 20 images of {root} ('light/003.png'); expected one row per image, "
        f"naming its path relative to {root} in column 'file'"
    )


def test_a_folder_csv_without_its_id_column_or_with_an_image_twice_is_refused(tmp_path):
    root = _tree(tmp_path / "tree")
    source = FolderSource(root, mode="L")
    path = _write_csv(tmp_path / "a.csv", ["grey", "odd", "site"], [[1, 0, "north"]] * 20)
    with pytest.raises(
        DomainError,
        match=rf"a.csv: no column 'file'; a folder source's table names each image by its path relative to {re.escape(str(root))}",
    ):
        read_columns(_declared(), path, source)
    rows = [[n, 1, 0, "north"] for n in source.image_ids] + [["dark/001.png", 2, 0, "north"]]
    path = _write_csv(tmp_path / "b.csv", ["file", "grey", "odd", "site"], rows)
    with pytest.raises(DomainError, match=r"b.csv: image 'dark/001.png' has two rows \(lines 3 and 22\); expected one"):
        read_columns(_declared(), path, source)


def test_a_bad_value_on_a_folder_table_names_the_image(tmp_path):
    root = _tree(tmp_path / "tree")
    source = FolderSource(root, mode="L")
    table = {"grey": np.arange(20.0), "odd": np.arange(20) % 2, "site": np.array(["north"] * 19 + ["down"])}
    with pytest.raises(DomainError, match=r"is 'down' in row 19, image 'light/009.png'; expected one of"):
        read_columns(_declared(), table, source)


def test_a_csv_row_of_the_wrong_width_names_its_line(tmp_path):
    source, _ = _source(n=2)
    (tmp_path / "t.csv").write_text("grey,odd\n1,0\n2\n")
    with pytest.raises(DomainError, match=r"t.csv, line 3: 1 cells, but the header has 2 columns"):
        read_columns([continuous("grey"), binary("odd")], tmp_path / "t.csv", source)


def test_a_table_of_another_kind_or_a_missing_file_is_named(tmp_path):
    source, _ = _source(n=2)
    with pytest.raises(DomainError, match="expected a mapping attribute -> array, or the path of a .csv or .npz file"):
        read_columns([binary("odd")], str(tmp_path / "t.parquet"), source)
    with pytest.raises(DomainError, match="t.csv: no such attribute table"):
        read_columns([binary("odd")], tmp_path / "t.csv", source)
