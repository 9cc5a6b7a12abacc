"""``pi-rules eval``: behavioural cases run against a real agent, with and without a rule
(docs/eval.md). ``cases`` reads case files, ``workspace`` makes each run's throw-away
copy and judges its checks, ``runners`` drives agents, ``run`` counts and reports."""
