"""The report's first step: the run folders read, checked and typed (``load``: the tree;
``folder``: one folder; ``batch``: many clean folders together; ``tables``: one CSV file),
with their env.json files (``envfile``), the rules rows keep (``consistency``), the errors
that name a file and a line (``errors``) and a prices file (``prices``)."""
