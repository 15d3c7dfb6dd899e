package task

// ParseIntent exposes parseIntent to the benchmarks of package task_test.
var ParseIntent = parseIntent
