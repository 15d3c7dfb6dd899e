package server

import (
	"net/http"

	"github.com/agentcraftlab/agentcraft/guard"
	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/llm/middleware"
	"github.com/agentcraftlab/agentcraft/pii"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
)

// registerSafety adds POST /api/pii/scan and POST /api/guard/check, which
// try PII detection and guard rules on a text, as the CLI's pii scan and
// guard check do.
func (s *Server) registerSafety() {
	s.handle("POST /api/pii/scan", identity.PermChat, s.piiScan)
	s.handle("POST /api/guard/check", identity.PermChat, s.guardCheck)
}

type piiEntity struct {
	Type   string  `json:"type"`
	Locale string  `json:"locale"`
	Rule   string  `json:"rule"`
	Start  int     `json:"start"`
	End    int     `json:"end"`
	Score  float64 `json:"score"`
}

// piiScan: {text, locales?, threshold?, mode?: scan|mask|redact} →
// {entities} (scan) or {text, entities} (mask, redact). Values are never
// echoed except inside the caller's own text offsets.
func (s *Server) piiScan(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Text      string   `json:"text"`
		Locales   []string `json:"locales"`
		Threshold float64  `json:"threshold"`
		Mode      string   `json:"mode"`
	}
	if !s.decodeBody(w, r, &req) {
		return
	}
	det, err := pii.New(&pii.Options{Locales: req.Locales, Threshold: req.Threshold})
	if err != nil {
		apierr.Write(w, apierr.BadRequest("", err.Error()))
		return
	}
	out := struct {
		Entities []piiEntity `json:"entities"`
		Text     *string     `json:"text,omitempty"`
	}{Entities: []piiEntity{}}
	ents := det.Scan(req.Text)
	switch req.Mode {
	case "", "scan":
	case "mask", "redact":
		mode := pii.Reversible
		if req.Mode == "redact" {
			mode = pii.Irreversible
		}
		m, err := pii.NewMasker(det, &pii.MaskerOptions{Mode: mode})
		if err != nil {
			apierr.Write(w, apierr.BadRequest("mode", err.Error()))
			return
		}
		var masked string
		masked, ents = m.Mask(req.Text)
		out.Text = &masked
	default:
		apierr.Write(w, apierr.BadRequest("mode", "mode must be scan (default), mask or redact"))
		return
	}
	for _, e := range ents {
		out.Entities = append(out.Entities, piiEntity{e.Type, e.Locale, e.Rule, e.Start, e.End, e.Score})
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

// guardCheck: {text, direction?: input|output, guard?: settings as in
// agentcraft.yaml} → {action, message?, matches}.
func (s *Server) guardCheck(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Text      string                   `json:"text"`
		Direction string                   `json:"direction"`
		Guard     middleware.GuardSettings `json:"guard"`
	}
	if !s.decodeBody(w, r, &req) {
		return
	}
	f, err := req.Guard.Policy()
	if err != nil {
		apierr.Write(w, apierr.BadRequest("guard", err.Error()))
		return
	}
	in := guard.Input{Direction: guard.DirectionInput, Messages: []guard.Message{{Role: guard.RoleUser, Text: req.Text}}}
	switch req.Direction {
	case "", "input":
	case "output":
		in = guard.Input{Direction: guard.DirectionOutput, Messages: []guard.Message{{Role: guard.RoleAssistant, Text: req.Text}}}
	default:
		apierr.Write(w, apierr.BadRequest("direction", "direction must be input (default) or output"))
		return
	}
	d := f.Check(r.Context(), in)
	type match struct {
		Rule   string `json:"rule"`
		Kind   string `json:"kind"`
		Match  string `json:"match"`
		Action string `json:"action"`
	}
	out := struct {
		Action  string  `json:"action"`
		Message string  `json:"message,omitempty"`
		Matches []match `json:"matches"`
	}{Action: d.Action.String(), Message: d.Message, Matches: []match{}}
	for _, m := range d.Matches {
		out.Matches = append(out.Matches, match{m.Rule, string(m.Kind), m.Match, m.Action.String()})
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}
