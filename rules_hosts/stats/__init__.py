"""``pi-rules stats``: what the sessions' journals say was delivered, read, fired and
denied, per rule (docs/stats.md). ``journal`` makes the records hosts append, ``read``
folds journals into counts, ``render`` prints text, JSON and the HTML page."""
