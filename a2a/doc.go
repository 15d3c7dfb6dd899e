// Package a2a speaks the Agent2Agent protocol (A2A, https://a2a-protocol.org)
// over its JSON-RPC binding: a Client that calls remote agents, a Server that
// publishes AgentCraft agents, and Tool, which offers a remote agent to an
// agent as a tool.
//
// The protocol is the official Go SDK's, github.com/a2aproject/a2a-go/v2
// (v2.3.1): its types (aliased here as Task, Message, Part, … so callers
// import one package), its client (a2aclient, with the agentcard resolver),
// its server (a2asrv: request handler, execution, streaming, card handler)
// and its 0.3 compatibility layer (a2acompat/a2av0: 0.3 cards, a 0.3
// JSON-RPC client transport and server handler). This package adds only
// what the SDK leaves to its users:
//
//   - the executor that runs a platform agent for a task (executor.go);
//   - routing by agent name, the index of agents and per-request cards;
//   - a task store scoped to the caller's workspace and agent that forgets
//     finished tasks after ServerOptions.TaskTTL (the SDK's in-memory store does
//     neither: it would grow without bound and show any task to anyone
//     knowing its id);
//   - on the client side, card discovery at the pre-0.3 path
//     (/.well-known/agent.json), 0.3 cards without preferredTransport, and
//     the fall back from 1.0 to 0.3 when a server answers "method not
//     found" (the SDK picks a version from the card and stays on it);
//   - TaskNotCancelable for a second CancelTask (the SDK answers it with
//     the canceled task; the protocol says an ended task is not cancelable);
//   - the A2A-Version header check (-32009 for versions other than 1.x and
//     0.3), which the SDK's JSON-RPC handlers do not make.
//
// Both protocol versions in use are spoken. Version 1.0 names its methods
// SendMessage, SendStreamingMessage, GetTask and CancelTask and writes
// ProtoJSON (roles ROLE_USER, states TASK_STATE_COMPLETED, parts {"text":…});
// version 0.3 names them message/send, message/stream, tasks/get and
// tasks/cancel and writes kind-tagged objects (roles user, states
// completed, parts {"kind":"text",…}).
//
// # Client
//
//	c, err := a2a.NewClient(ctx, "https://agents.example.com/a2a/helper", &a2a.ClientOptions{Token: key})
//	answer, taskID, err := c.SendText(ctx, "Summarise this …")
//
// NewClient discovers the agent card: the URL itself when it ends in .json,
// else {url}/.well-known/agent-card.json, falling back to
// {url}/.well-known/agent.json. It then picks the card's JSON-RPC interface,
// 1.0 before 0.3 (or the version ClientOptions.Version forces), and talks
// to it through the SDK client. A server that answers a 1.0 method with
// "method not found" (-32601) is asked again over 0.3, and the client stays
// on 0.3 from then on.
//
// # Server
//
// Server publishes the agents of the caller's workspace. With the handler
// mounted at /a2a/ (as server.New does):
//
//	GET  /a2a                                     index: every agent with its card URL
//	GET  /a2a/{agent}/.well-known/agent-card.json the agent's card (agent.json too)
//	POST /a2a/{agent}                             JSON-RPC: SendMessage,
//	                                              SendStreamingMessage, GetTask,
//	                                              CancelTask and their 0.3 names
//
// A request naming a 0.3 method (one with a "/") goes to the SDK's 0.3
// JSON-RPC handler, any other to its 1.0 one; both share one request
// handler and task store. The card advertises one JSON-RPC interface per
// version (1.0 first, then 0.3) at the same URL and, through the SDK's 0.3
// card producer, the 0.3 top-level fields (url, protocolVersion,
// preferredTransport, security) as well, so clients of either version read
// it. It declares the HTTP bearer security scheme: callers send the same
// API key as for /api. An agent's text deltas stream as chunks of one
// "answer" artifact; its reply also ends up in the task's history.
// CancelTask cancels the running agent.
package a2a
