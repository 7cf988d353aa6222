"""Pure numpy/scipy algorithms of both papers. Never imports panel or holoviews."""
