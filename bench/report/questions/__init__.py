"""One folder per question the site answers: each holds its page's model (what it asks of the
judge), its view (how it is shown) and its template."""
