"""Pi, one home: its tool table and plugin (``plugin``)."""
