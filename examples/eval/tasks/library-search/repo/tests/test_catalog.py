from library.catalog import Catalog


def test_by_author():
    catalog = Catalog()
    catalog.add("Emma", "Jane Austen", 1815)
    catalog.add("Persuasion", "Jane Austen", 1817)
    catalog.add("Ulysses", "James Joyce", 1922)
    assert catalog.by_author("Jane Austen") == ["Emma", "Persuasion"]
