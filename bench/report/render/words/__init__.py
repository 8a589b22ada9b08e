"""What several pages say alike: configurations (``labels``), advice (``sentences``,
``recommendations``), one-off costs (``costs``), claims (``claim_words``), caveats, a
machine's answer block (``answers``) and section heading (``context``), capped comparison
tables (``comparisons``), tables read row by row (``frames``) and the run files copied into
the site (``files``)."""
