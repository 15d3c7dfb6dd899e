// The LangGraph.js side of bench/react: LangGraph's prebuilt ReAct agent
// (createReactAgent) driven by a scripted fake chat model through the same
// transcript as the Go benchmarks — `steps` turns that each say a short
// thought and call the tool `lookup` once, then a final answer — with a
// fake tool that returns a constant. Nothing reaches the network, so the
// time per step is LangGraph's (and LangChain core's) orchestration.
//
//	node bench.mjs --steps 5 [--checkpointer none|memory] [--seconds 1] [--rounds 3] [--warmup 1]
//
// prints one JSON line: {"ns_per_step", "cpu_ns_per_step", "ns_per_run",
// "steps", "runs", ...}; ns_per_step is the median over rounds of (wall
// time of a round / runs / steps), cpu_ns_per_step the same of the
// process's CPU time (user and system, every thread: GC included), which a
// loaded machine inflates less.
// Every run's result is checked (message count, the final answer, one tool
// message per step); a wrong transcript exits non-zero.

import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { MemorySaver } from "@langchain/langgraph";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { readFileSync } from "node:fs";

// The transcript, word for word the Go side's (bench_test.go).
const TOOL_NAME = "lookup";
const TOOL_RESULT = "42";
const THOUGHT = "I will look it up.";
const ANSWER = "The answer is 42.";
const GOAL = "Look the answer up, then answer.";

function parseArgs(argv) {
  const opts = { steps: 5, checkpointer: "none", seconds: 1, rounds: 3, warmup: 1 };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, "");
    const val = argv[i + 1];
    if (!(key in opts) || val === undefined) {
      throw new Error(`unknown or incomplete flag ${argv[i]}: use --steps N --checkpointer none|memory --seconds S --rounds R --warmup S`);
    }
    opts[key] = key === "checkpointer" ? val : Number(val);
  }
  if (!Number.isInteger(opts.steps) || opts.steps < 1) throw new Error("--steps: a whole number of at least 1");
  if (!["none", "memory"].includes(opts.checkpointer)) throw new Error("--checkpointer: none or memory");
  return opts;
}

// ScriptedChatModel answers from the transcript. It reads its place from
// the messages it is given (one tool message per step done), not from a
// counter, so one instance serves every run. bindTools returns the model
// itself: the script already knows its one tool.
class ScriptedChatModel extends BaseChatModel {
  constructor(steps) {
    super({});
    this.steps = steps;
  }

  _llmType() {
    return "scripted";
  }

  bindTools() {
    return this;
  }

  async _generate(messages) {
    let done = 0;
    for (const m of messages) {
      if (m.type === "tool") done++;
    }
    const usage_metadata = { input_tokens: 20, output_tokens: 10, total_tokens: 30 };
    const message =
      done < this.steps
        ? new AIMessage({
            content: THOUGHT,
            tool_calls: [{ id: `call_${done + 1}`, name: TOOL_NAME, args: { query: `step ${done + 1}` }, type: "tool_call" }],
            usage_metadata,
          })
        : new AIMessage({ content: ANSWER, usage_metadata });
    return { generations: [{ message, text: message.content }] };
  }
}

const lookup = tool(async () => TOOL_RESULT, {
  name: TOOL_NAME,
  description: "Looks a fact up.",
  schema: z.object({ query: z.string() }),
});

// version reads an installed package's version (their exports do not
// include package.json).
function version(pkg) {
  const file = new URL(`./node_modules/${pkg}/package.json`, import.meta.url);
  return JSON.parse(readFileSync(file, "utf8")).version;
}

function check(result, steps) {
  const msgs = result.messages;
  const tools = msgs.filter((m) => m.type === "tool");
  const last = msgs[msgs.length - 1];
  if (msgs.length !== 2 * steps + 2 || tools.length !== steps || last.content !== ANSWER || tools.some((m) => m.content !== TOOL_RESULT)) {
    throw new Error(`wrong transcript: ${msgs.length} messages, ${tools.length} tool results, last ${JSON.stringify(last.content)}`);
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  // Tracing would send every run to LangSmith: no network here, and it
  // would not be orchestration.
  for (const v of ["LANGSMITH_TRACING", "LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING", "LANGCHAIN_TRACING_V2"]) {
    if (["true", "1"].includes((process.env[v] ?? "").toLowerCase())) throw new Error(`${v} is set: unset it, the benchmark measures no tracing`);
  }
  const checkpointer = opts.checkpointer === "memory" ? new MemorySaver() : undefined;
  const agent = createReactAgent({ llm: new ScriptedChatModel(opts.steps), tools: [lookup], checkpointer });
  // Each ReAct step is two super-steps (agent, tools); the default limit
  // of 25 would stop a long transcript.
  const recursionLimit = 2 * opts.steps + 10;
  let thread = 0;

  async function once() {
    const config = { recursionLimit };
    let id;
    if (checkpointer) {
      id = `t${thread++}`;
      config.configurable = { thread_id: id };
    }
    const result = await agent.invoke({ messages: [{ role: "user", content: GOAL }] }, config);
    check(result, opts.steps);
    // A thread per run, dropped after it, so the saver does not grow
    // over the benchmark (the Go side's journal is per run too).
    if (checkpointer) await checkpointer.deleteThread(id);
  }

  const warmEnd = process.hrtime.bigint() + BigInt(Math.round(opts.warmup * 1e9));
  while (process.hrtime.bigint() < warmEnd) await once();

  const perStep = [];
  const cpuPerStep = []; // CPU time of the process, all its threads (GC too)
  let runs = 0;
  for (let r = 0; r < opts.rounds; r++) {
    const budget = BigInt(Math.round(opts.seconds * 1e9));
    const cpu0 = process.cpuUsage();
    const start = process.hrtime.bigint();
    let n = 0;
    let elapsed = 0n;
    do {
      await once();
      n++;
      elapsed = process.hrtime.bigint() - start;
    } while (elapsed < budget);
    const cpu = process.cpuUsage(cpu0);
    runs += n;
    perStep.push(Number(elapsed) / n / opts.steps);
    cpuPerStep.push(((cpu.user + cpu.system) * 1000) / n / opts.steps);
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(
    JSON.stringify({
      ns_per_step: Math.round(median(perStep)),
      cpu_ns_per_step: Math.round(median(cpuPerStep)),
      ns_per_run: Math.round(median(perStep) * opts.steps),
      steps: opts.steps,
      runs,
      rounds_ns_per_step: perStep.map(Math.round),
      checkpointer: opts.checkpointer,
      node: process.version,
      langgraph: version("@langchain/langgraph"),
      langchain_core: version("@langchain/core"),
    }),
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
