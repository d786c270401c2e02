# solutions/ holds the eval tasks' reference solutions (files laid over a task's repository), not tests of ours
collect_ignore = ["solutions"]
