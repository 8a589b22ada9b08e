"""One module per command of ``python -m bench``; ``bench.cli`` holds the one parser."""
