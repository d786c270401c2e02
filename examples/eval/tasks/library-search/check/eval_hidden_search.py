from library.catalog import Catalog

catalog = Catalog()
catalog.add("Persuasion", "Jane Austen", 1817)
catalog.add("Emma", "Jane Austen", 1815)
catalog.add("Ulysses", "James Joyce", 1922)
catalog.add("Dubliners", "James Joyce", 1914)
assert catalog.search("austen") == ["Emma", "Persuasion"], catalog.search("austen")
assert catalog.search("JAMES") == ["Dubliners", "Ulysses"]
assert catalog.search("ss") == ["Ulysses"], catalog.search("ss")
assert catalog.search("zzz") == []
assert catalog.search("e") == ["Dubliners", "Emma", "Persuasion", "Ulysses"]
print("hidden check: ok")
