"""The op table, dispatch, composites and the ``leafgrad.*`` op functions."""
