"""The data behind the pages, to download (its view and template)."""
