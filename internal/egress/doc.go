// Package egress is the outbound HTTP policy of the server: every request a
// workflow author can aim — workflow http-request nodes, webhook hooks, the
// http_request tool — goes through a Guard, so that nobody who can edit a
// workflow can make the server call its own loopback interface, the private
// network it runs in or the cloud metadata service (server-side request
// forgery).
//
// Compile a Policy once and share the Guard:
//
//	g, err := (&egress.Policy{Allow: cfg.Allow}).Compile()
//	if err != nil {
//		return err // names the malformed allow entry
//	}
//	if err := g.CheckURL(rawURL); err != nil {
//		return err // early, friendly refusal of bad schemes and literal IPs
//	}
//	resp, err := g.Client().Do(req)
//	if errors.Is(err, egress.ErrBlocked) { ... }
//	defer resp.Body.Close()
//	body, err := egress.ReadBody(resp, 1<<20)
//
// The authoritative check runs in the dialer, on the IP address actually being
// connected to, after DNS resolution: a host name that resolves (or, by DNS
// rebinding, later re-resolves) to a blocked address is refused, and so is
// every redirect hop. CheckURL only gives an earlier, clearer error.
//
// Code that sends requests through something other than Client — a proxy
// in front of a headless browser — dials with Guard.DialContext, the same
// checked dialer. CheckResolved resolves a URL's host and checks every
// address, for callers that must judge a request before anything dials
// (a browser's request interception); it cannot pin the address, so the
// dial-time check stays the authoritative one.
//
// Outgoing webhooks are signed with Sign and checked by receivers with Verify;
// the signature travels in the SignatureHeader header as "t=<unix>,v1=<hex>",
// the scheme Stripe uses.
package egress
