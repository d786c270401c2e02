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
