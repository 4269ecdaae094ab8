"""The SQL of seqk, shipped as the package seqk.sql; see seqk/sqlfiles.py."""
