"""The report's last step's kit: the Markdown templates' environment (``markdown``), numbers
(``fmt``), escaping (``escape``), page paths (``paths``), charts (``charts``, ``costcharts``,
``drawing``), the writer, the MkDocs build (``site``, ``mkdocs_hooks``) and, in ``words``,
the phrases several pages share. It decides nothing: each question's view chooses what to
show, from its page model."""
