package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/agentcraftlab/agentcraft/internal/egress"
	"github.com/agentcraftlab/agentcraft/tool"
)

const (
	// maxListedRefusals bounds the refused requests a result lists.
	maxListedRefusals = 20
	// maxExtractMatches bounds the matches one extract returns.
	maxExtractMatches = 200
	// The page's viewport, what a screenshot shows.
	viewportWidth, viewportHeight = 1280, 800
)

// run starts the browser, runs the actions and words the transcript.
func (s *session) run(ctx context.Context, actions []action) (tool.Result, error) {
	o := s.b.opts
	callCtx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()

	px, err := startProxy(s.b.guard, s.refuse)
	if err != nil {
		return tool.Result{}, err
	}
	// Last: the browser is dead by then, so no tunnel is left to wait for.
	defer px.close()

	allocCtx, cancelAlloc := chromedp.NewExecAllocator(callCtx, s.chromedpOptions(px.url())...)
	// Kills Chromium, waits for it and removes its profile.
	defer cancelAlloc()
	tab, cancelTab := chromedp.NewContext(allocCtx)
	defer cancelTab()

	// The first Run starts the browser for the life of callCtx; the
	// viewport is a laptop's (the window flag alone leaves less).
	if err := chromedp.Do(tab, chromedp.EmulateViewport(viewportWidth, viewportHeight)); err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return tool.ErrorResult("the browser tool cannot run: Chromium (%s) did not start: %v", s.exe, err), nil
	}
	// Subscribe before enabling, so no paused request is missed; every
	// request of the tab now waits for s.decide.
	paused := chromedp.Events(tab, fetch.RequestPaused)
	var wg sync.WaitGroup
	wg.Go(func() {
		for ev, err := range paused {
			if err != nil {
				return // the tab is closing
			}
			s.decide(tab, ev)
		}
	})
	// Before the deferred kill: the interception ends with the tab.
	defer func() { cancelTab(); wg.Wait() }()
	if _, err := chromedp.Call(tab, fetch.Enable, fetch.EnableParams{}); err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return tool.ErrorResult("the browser tool cannot run: Chromium refused request interception: %v", err), nil
	}
	// A page must not write files on this machine.
	if _, err := chromedp.CallBrowser(tab, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorDeny}); err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return tool.ErrorResult("the browser tool cannot run: Chromium refused to turn downloads off: %v", err), nil
	}

	var out transcript
	out.max = o.MaxOutputBytes
	for i, a := range actions {
		text, err := s.do(tab, a)
		if err == nil {
			out.step(i, a, text)
			continue
		}
		switch {
		case ctx.Err() != nil:
			return tool.Result{}, ctx.Err()
		case callCtx.Err() != nil:
			out.fail(i, a, fmt.Sprintf("the call did not finish within %v", o.Timeout))
		default:
			out.fail(i, a, err.Error())
		}
		if i+1 < len(actions) {
			out.note(fmt.Sprintf("(%d later actions not run)", len(actions)-i-1))
		}
		return tool.Result{Content: out.finish(s.refusals()), IsError: true}, nil
	}
	return tool.Result{Content: out.finish(s.refusals())}, nil
}

// do runs one action within the action timeout and returns what it says.
func (s *session) do(tab context.Context, a action) (string, error) {
	timeout := s.b.opts.ActionTimeout
	actx, cancel := context.WithTimeout(tab, timeout)
	defer cancel()
	wrap := func(err error, what string) error {
		if errors.Is(err, context.DeadlineExceeded) && tab.Err() == nil {
			return fmt.Errorf("%s within %v", what, timeout)
		}
		return err
	}
	switch {
	case a.Open != nil:
		return s.open(actx, *a.Open, wrap)
	case a.Click != nil:
		err := chromedp.Do(actx, chromedp.Click(chromedp.CSS(*a.Click)))
		return "done", wrap(err, fmt.Sprintf("no visible element matched %q", *a.Click))
	case a.Type != nil:
		sel := chromedp.CSS(a.Type.Selector)
		steps := []chromedp.Action[chromedp.Void]{chromedp.SendKeys(sel, a.Type.Text)}
		if a.Type.Submit {
			steps = append(steps, chromedp.SendKeys(sel, kb.Enter))
		}
		err := chromedp.Do(actx, steps...)
		return "done", wrap(err, fmt.Sprintf("no visible element matched %q", a.Type.Selector))
	case a.Wait != nil:
		err := chromedp.Do(actx, chromedp.WaitVisible(chromedp.CSS(*a.Wait)))
		return "visible", wrap(err, fmt.Sprintf("no element matching %q became visible", *a.Wait))
	case a.Extract != nil:
		if err := chromedp.Do(actx, chromedp.WaitReady(chromedp.CSS(*a.Extract))); err != nil {
			return "", wrap(err, fmt.Sprintf("no element matched %q", *a.Extract))
		}
		// At most maxExtractMatches matches, each cut in the page
		// at the output cap: a selector like "*" on a huge page
		// must not ship megabytes over the protocol.
		sel, _ := json.Marshal(*a.Extract)
		texts, err := chromedp.Run(actx, chromedp.Evaluate[[]string](
			fmt.Sprintf(`Array.from(document.querySelectorAll(%s)).slice(0, %d).map(e => (e.innerText || "").slice(0, %d))`,
				sel, maxExtractMatches, s.b.opts.MaxOutputBytes)))
		if err != nil {
			return "", wrap(err, "the page did not answer")
		}
		return formatExtract(texts), nil
	}
	return s.screenshot(actx, wrap)
}

// open loads u after the policy allowed it.
func (s *session) open(actx context.Context, raw string, wrap func(error, string) error) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an absolute http or https URL: write it like \"https://example.com/page\"", raw)
	}
	if err := s.b.guard.CheckResolved(actx, u.String()); err != nil {
		if errors.Is(err, egress.ErrBlocked) {
			s.refuse(u.Redacted(), err)
			return "", fmt.Errorf("refused by the server's outbound policy: loopback, private-network and metadata addresses cannot be reached unless an administrator allow-lists them (%v)", err)
		}
		return "", wrap(err, "the host name did not resolve")
	}
	resp, err := chromedp.Run(actx, chromedp.NavigateResponse(u.String()))
	if err != nil {
		var le *chromedp.LoadError
		if errors.As(err, &le) && strings.Contains(le.ErrorText, "ERR_BLOCKED_BY_CLIENT") {
			return "", errors.New("the page (or a redirect of it) was refused by the server's outbound policy; see the refused requests below")
		}
		return "", wrap(err, "the page did not load")
	}
	title, _ := chromedp.Run(actx, chromedp.Title())
	loc, _ := chromedp.Run(actx, chromedp.Location())
	var b strings.Builder
	if resp != nil {
		fmt.Fprintf(&b, "HTTP %d", resp.Status)
	} else {
		b.WriteString("loaded")
	}
	if title != "" {
		fmt.Fprintf(&b, ", title %q", oneLine(title))
	}
	if loc != "" && !sameURL(loc, u) {
		fmt.Fprintf(&b, ", now at %s", loc)
	}
	return b.String(), nil
}

// sameURL reports whether loc is u, but for the "/" of an empty path.
func sameURL(loc string, u *url.URL) bool {
	l, err := url.Parse(loc)
	if err != nil {
		return false
	}
	want := *u
	if want.Path == "" {
		want.Path = "/"
	}
	return l.String() == want.String()
}

// screenshot saves a PNG of the viewport in the files directory.
func (s *session) screenshot(actx context.Context, wrap func(error, string) error) (string, error) {
	if s.b.opts.FilesDir == "" {
		return "not taken: this server has no shared files directory (tools.files_dir) to keep screenshots in; use extract to read the page", nil
	}
	buf, err := chromedp.Run(actx, chromedp.CaptureScreenshot())
	if err != nil {
		return "", wrap(err, "the page did not answer")
	}
	name, err := s.b.saveScreenshot(buf)
	if err != nil {
		return "", fmt.Errorf("the screenshot could not be saved: %v", err)
	}
	size := ""
	if cfg, err := png.DecodeConfig(bytes.NewReader(buf)); err == nil {
		size = fmt.Sprintf("%d×%d, ", cfg.Width, cfg.Height)
	}
	return fmt.Sprintf("saved as %s (%s%d KiB); ocr_image and the file tools read it by that path", name, size, (len(buf)+1023)/1024), nil
}

// decide answers one paused request: continue it when the policy allows
// its URL, fail it otherwise.
func (s *session) decide(tab context.Context, ev fetch.EventRequestPaused) {
	raw := ev.Request.URL + ev.Request.URLFragment
	if err := s.check(tab, raw); err != nil {
		target := raw
		if u, perr := url.Parse(raw); perr == nil {
			u.RawQuery, u.Fragment = "", ""
			target = u.Redacted()
		}
		s.refuse(target, err)
		_, _ = chromedp.Call(tab, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
		return
	}
	_, _ = chromedp.Call(tab, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
}

// check applies the policy to one request URL, caching the verdict by
// scheme, host and port for the call.
func (s *session) check(tab context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("unreadable URL: %w", egress.ErrBlocked)
	}
	switch u.Scheme {
	case "data", "blob", "about":
		return nil // nothing leaves the browser
	case "http", "https", "ws", "wss":
	default:
		return fmt.Errorf("scheme %q not allowed: %w", u.Scheme, egress.ErrBlocked)
	}
	key := u.Scheme + "://" + u.Host
	if err, ok := s.verdicts[key]; ok {
		return err
	}
	check := *u
	switch u.Scheme {
	case "ws":
		check.Scheme = "http"
	case "wss":
		check.Scheme = "https"
	}
	cctx, cancel := context.WithTimeout(tab, 5*time.Second)
	defer cancel()
	err = s.b.guard.CheckResolved(cctx, check.String())
	if err != nil && !errors.Is(err, egress.ErrBlocked) {
		// A name that does not resolve: let Chromium fail it as it
		// would, through the proxy, which checks again.
		err = nil
	}
	s.verdicts[key] = err
	return err
}

// formatExtract joins the texts of an extract's matches.
func formatExtract(texts []string) string {
	switch len(texts) {
	case 0:
		return "(no match)"
	case 1:
		return "\n" + normalizeText(texts[0])
	}
	var b strings.Builder
	if len(texts) == maxExtractMatches {
		fmt.Fprintf(&b, "%d matches or more, the first %[1]d", len(texts))
	} else {
		fmt.Fprintf(&b, "%d matches", len(texts))
	}
	for i, t := range texts {
		fmt.Fprintf(&b, "\n[%d] %s", i+1, normalizeText(t))
	}
	return b.String()
}

// transcript is the result text of a call, cut at max bytes.
type transcript struct {
	b   strings.Builder
	max int
	cut bool
}

func (t *transcript) write(s string) {
	if t.cut {
		return
	}
	if left := t.max - t.b.Len(); len(s) > left {
		s, _ = cutString(s, left)
		t.cut = true
	}
	t.b.WriteString(s)
}

func (t *transcript) step(i int, a action, text string) {
	sep := " "
	if strings.HasPrefix(text, "\n") {
		sep = ""
	}
	t.write(fmt.Sprintf("%d. %s:%s%s\n", i+1, a, sep, text))
}

func (t *transcript) fail(i int, a action, msg string) {
	t.write(fmt.Sprintf("%d. %s: FAILED: %s\n", i+1, a, msg))
}

func (t *transcript) note(s string) { t.write(s + "\n") }

// finish appends the refused requests and the cut note.
func (t *transcript) finish(refused []refusal) string {
	var tail strings.Builder
	if len(refused) > 0 {
		fmt.Fprintf(&tail, "\nRefused by the outbound policy (%d):\n", len(refused))
		for i, r := range refused {
			if i == maxListedRefusals {
				fmt.Fprintf(&tail, "- and %d more\n", len(refused)-i)
				break
			}
			fmt.Fprintf(&tail, "- %s: %s\n", r.target, r.reason)
		}
	}
	if t.cut {
		fmt.Fprintf(&tail, "\n[output cut at %d bytes: extract less, with a narrower selector]\n", t.max)
	}
	return strings.TrimSuffix(t.b.String()+tail.String(), "\n")
}

// cutString is cut for the transcript.
func cutString(s string, max int) (string, bool) {
	if max < 0 {
		max = 0
	}
	return cut(s, max)
}
