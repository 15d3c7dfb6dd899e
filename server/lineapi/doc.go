// Package lineapi is the LINE Messaging API channel of a workspace: people
// send requests and decide approvals in LINE, and the task service's
// answers — results, questions, approval cards — come back there.
//
// A Channel has two halves, built on LINE's official SDK
// (github.com/line/line-bot-sdk-go/v8):
//
//   - Webhook is the handler of POST /api/line/webhook. It verifies the
//     x-line-signature (HMAC-SHA256 of the raw body with the channel
//     secret) before it parses anything, then turns a text message into a
//     task.Request (Source "line", SourceRef the webhookEventId, so LINE's
//     redeliveries are deduplicated by the task service) and an approval
//     button's postback into a task.Decision. The LINE user is resolved to
//     the AgentCraft user who linked it (Accounts); an unlinked user is told
//     to link the account by signing in to the studio once with LINE
//     Login (an auth.oidc provider of issuer https://access.line.me), and
//     nothing else happens.
//   - Sender is the task.Sender of the channel "line". It answers with the
//     asking message's reply token while that is fresh (ReplyTokenTTL) and
//     pushes otherwise, with an X-Line-Retry-Key derived from the
//     notification's id so a retried push is delivered once. LINE's 4xx
//     answers (but 429) wrap task.ErrPermanent; 429, 5xx and network
//     failures are retryable.
//
// The composition root wires it from the configuration file:
//
//	channels:
//	  line:
//	    channel_secret: ${LINE_CHANNEL_SECRET}
//	    channel_access_token: ${LINE_CHANNEL_ACCESS_TOKEN}
//	    api_base_url: https://api.line.me   # optional
//	    workspace: ws_123                   # the workspace requests go to
//
// into Options, mounts Webhook at POST /api/line/webhook as a public route
// (LINE cannot send our credentials: the signature is the only
// authentication, so the route must not sit behind the API's auth
// middleware), and registers Sender with the task service for the channel
// "line".
//
// Package lineapi/linetest is a strict fake of the Messaging API for
// tests, with builders of signed webhook bodies.
package lineapi
