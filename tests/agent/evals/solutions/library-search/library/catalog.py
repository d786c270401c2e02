from library.books import Book


class Catalog:
    def __init__(self):
        self.books = []

    def add(self, title, author, year):
        book = Book(title, author, year)
        self.books.append(book)
        return book

    def by_author(self, author):
        """The titles by `author`, oldest first."""
        return [b.title for b in sorted(self.books, key=lambda b: b.year) if b.author == author]

    def search(self, term):
        """The titles whose title or author contains `term`, ignoring case, sorted."""
        term = term.lower()
        return sorted(b.title for b in self.books if term in b.title.lower() or term in b.author.lower())
