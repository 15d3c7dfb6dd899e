package cli

import (
	"fmt"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/internal/egress"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/tool"
	"github.com/agentcraftlab/agentcraft/tool/web"
)

// registerWeb registers the research tools of package web: web_fetch and
// browser always (they need only the egress policy; the browser says so
// when Chromium is missing), web_search when tools.web_search names a back
// end. Screenshots go to tools.files_dir, where the file tools read them.
func registerWeb(cfg config.Config, eg *egress.Guard, p *platform.Platform) error {
	t := cfg.Tools
	fetch, err := web.NewFetch(eg.Client(), &web.FetchOptions{MaxBytes: t.WebFetch.MaxBytes, MaxTextBytes: t.WebFetch.MaxTextBytes, Timeout: t.WebFetch.Timeout})
	if err != nil {
		return fmt.Errorf("tools.web_fetch: %w", err)
	}
	browser, err := web.NewBrowser(eg, &web.BrowserOptions{Chromium: t.Browser.Chromium, Timeout: t.Browser.Timeout, FilesDir: t.FilesDir})
	if err != nil {
		return fmt.Errorf("tools.browser: %w", err)
	}
	tools := []tool.Tool{fetch, browser}
	if ws := t.WebSearch; ws.Backend != "" {
		search, err := web.NewSearch(web.SearchBackend(ws.Backend), &web.SearchOptions{BaseURL: ws.BaseURL, APIKey: ws.APIKey, MaxResults: ws.MaxResults})
		if err != nil {
			return fmt.Errorf("tools.web_search: %w", err)
		}
		tools = append(tools, search)
	}
	for _, tl := range tools {
		if err := p.Tools().Register(tl); err != nil {
			return fmt.Errorf("register %s: %w", tl.Name(), err)
		}
	}
	return nil
}
