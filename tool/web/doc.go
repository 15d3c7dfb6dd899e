// Package web gives agents the open web: the tools web_search (a search
// API: SearXNG, Brave or Tavily), web_fetch (one page, as readable text)
// and browser (a headless Chromium driven by a list of actions).
//
// Create each with its constructor and register it:
//
//	guard, err := (&egress.Policy{Allow: cfg.Egress.Allow}).Compile()
//	fetch, err := web.NewFetch(guard.Client(), nil)
//	browser, err := web.NewBrowser(guard, &web.BrowserOptions{FilesDir: dir})
//	search, err := web.NewSearch(web.Brave, &web.SearchOptions{APIKey: key})
//	for _, t := range []tool.Tool{fetch, browser, search} {
//		if err := reg.Register(t); err != nil { ... }
//	}
//
// web_fetch and browser go where the model tells them, so both follow the
// outbound policy of package internal/egress: web_fetch sends through the
// policy's client; the browser checks every request its page makes
// (Chromium's request interception, answered after CheckResolved) and
// reaches the network only through a proxy that dials with the policy's
// dialer, so that neither a redirect, a sub-resource, a pop-up nor a DNS
// answer that changes between check and connect reaches what the policy
// refuses. web_search calls only the administrator's back end.
//
// All three fail with error Results the model can read (a refused address,
// an HTTP status, a missing Chromium with how to install it), never with
// Go errors, which are kept for the caller's cancellation.
package web
