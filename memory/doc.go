// Package memory is what AgentCraft remembers for people: conversations
// that continue across requests, surfaces and devices, and memory items
// agents recall, remember and forget.
//
// Conversations keeps threads in the store (store.Conversations). The run
// seam (package run) calls it for every run whose Caller names a
// conversation: Begin returns the history to send — the thread's summary
// as a system message, then its recent turns verbatim — and Finish stores
// the new turn. A thread whose history outgrows the budget is compacted:
// the older turns are summarised with the agent's own model, the summary
// and the seq it covers are stored, and the recent turns stay verbatim.
//
//	convs := memory.NewConversations(st, &memory.ConversationOptions{Memories: mems})
//	runner := run.New(p, &run.Options{Conversations: convs, Memory: mems})
//	a, _ := runner.Agent(ctx, run.Caller{Principal: pr, ConversationID: id}, "helper")
//	for ev, err := range a.Run(ctx, agent.Input{Messages: newTurn}) { ... }
//
// Memories keeps memory items (store.Memories) and a search index of them
// (search.Engine). Visibility holds by construction: every (workspace,
// scope, owner) has its own index — memory/<ws>/workspace for what the
// whole workspace may recall (workspace memories and group-visible user
// memories), memory/<ws>/user/<owner> for one owner's personal memories,
// memory/<ws>/conversation/<id> for one conversation's — and Recall
// searches exactly the indexes the caller may read, so another person's
// personal memory cannot be among the hits, whatever the query. The store
// is the source of truth: an index missing or out of step (a restarted
// in-memory engine, say) is rebuilt from it on first use, and every hit is
// read back from the store before it is returned.
//
// Owners. A principal's owner string (Owner) is "user:<id>" when the run
// acts for a person (run.Principal.UserID); without one it is the actor —
// "apikey:<id>", "oauth:<client>", "external:<issuer>#<subject>" (an
// outside issuer's /mcp token linked to no user), "system:<what>" — so
// two API keys never see each other's personal memories or conversations,
// and when the front
// end names its end user (Open WebUI's user headers, the OpenAI "user"
// field) the owner is narrowed to that end user of the actor
// ("apikey:<id>/end-user:<name>"): a key shared by a front end's users
// gives each of them their own memory.
//
// Agents whose spec enables memory (store.AgentMemory) get three tools
// bound to the run's principal (Memories.Tools): recall, remember and
// forget. The owner, workspace and conversation come from the principal,
// never from the model's arguments; remember applies the agent's PII
// policy (keep, redact or block) before anything is stored.
package memory

import (
	"github.com/agentcraftlab/agentcraft/run"
)

// Owner is the owner string of p's conversations and personal memories;
// see the package documentation.
func Owner(p run.Principal) string {
	if p.UserID != "" {
		return "user:" + p.UserID
	}
	owner := p.ActorString()
	if p.EndUser != "" {
		owner += "/end-user:" + p.EndUser
	}
	return owner
}
