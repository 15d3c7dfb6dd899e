// Package react benchmarks the orchestration overhead of one ReAct step —
// a model call that asks for one tool call, the tool call, and the result
// going back into the transcript — on AgentCraft's autonomous executor
// (package autonomous) and plain tool loop (package agent), against
// LangGraph.js's prebuilt ReAct agent (createReactAgent) in js/. The model
// and the tool are fakes on both sides, answering the same scripted
// transcript in-process, so what is timed is the loop around them.
//
// It is a separate module (and js/ a separate npm package) so that
// nothing of it enters the product's go.mod. Run the Go side with
//
//	cd bench/react && go test -run '^$' -bench . -benchmem
//
// and both sides in one run, with the ratio, with
//
//	cd bench/react/js && npm ci && cd .. && AGENTCRAFT_BENCH_LANGGRAPH=1 go test -run TestCompareLangGraph -v
//
// See README.md for what is measured and the measured numbers.
package react
