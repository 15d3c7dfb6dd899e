package memory

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/agentcraftlab/agentcraft/llm/middleware"
	"github.com/agentcraftlab/agentcraft/pii"
	"github.com/agentcraftlab/agentcraft/store"
)

// ErrPIIBlocked refuses a memory holding personal data under the block
// policy (store.AgentMemory.PII "block").
var ErrPIIBlocked = errors.New("memory: the text holds personal data and this agent's memory policy (pii: block) refuses to store it")

// PIIMode is the policy remember applies for an agent whose memory block
// says mode (store.AgentMemory.PII) and whose model chain applies
// agentPII: mode when set; otherwise redact when the chain redacts, keep
// when it masks (its PII layer masks a recalled value again before any
// model sees it) or has no PII layer.
func PIIMode(mode string, agentPII *middleware.PIISettings) string {
	switch {
	case mode != "":
		return mode
	case agentPII != nil && agentPII.Mode == "redact":
		return store.MemoryPIIRedact
	}
	return store.MemoryPIIKeep
}

// PIIMasker returns the Masker of PIIMode(mode, agentPII), detecting with
// the locales and threshold of agentPII (all locales and the default
// threshold without one); the remember tool of an agent uses it. Keep is
// a nil Masker.
func (m *Memories) PIIMasker(mode string, agentPII *middleware.PIISettings) (Masker, error) {
	return m.pii.masker(mode, agentPII)
}

// piiCache holds one detector per set of locales and threshold: building
// one compiles its rules, which costs more than a remember call.
type piiCache struct {
	// mu guards detectors.
	mu        sync.Mutex
	detectors map[string]*pii.Scanner
}

func (c *piiCache) masker(mode string, agentPII *middleware.PIISettings) (Masker, error) {
	mode = PIIMode(mode, agentPII)
	if mode == store.MemoryPIIKeep {
		return nil, nil
	}
	var o pii.Options
	if agentPII != nil {
		o = pii.Options{Locales: agentPII.Locales, Threshold: agentPII.Threshold}
	}
	det, err := c.detector(o)
	if err != nil {
		return nil, fmt.Errorf("memory: pii policy: %w", err)
	}
	switch mode {
	case store.MemoryPIIRedact:
		return func(text string) (string, error) {
			// A masker per call: masking is quick, and a shared one's
			// vault would need a lock.
			mk, err := pii.NewMasker(det, &pii.MaskerOptions{Mode: pii.Irreversible})
			if err != nil {
				return "", fmt.Errorf("memory: pii policy: %w", err)
			}
			out, _ := mk.Mask(text)
			return out, nil
		}, nil
	case store.MemoryPIIBlock:
		return func(text string) (string, error) {
			ents := det.Scan(text)
			if len(ents) == 0 {
				return text, nil
			}
			var types []string
			for _, e := range ents {
				if !slices.Contains(types, e.Type) {
					types = append(types, e.Type)
				}
			}
			// The types, never the values.
			return "", fmt.Errorf("%w (found %s)", ErrPIIBlocked, strings.Join(types, ", "))
		}, nil
	}
	return nil, fmt.Errorf("memory: pii policy %q: use keep, redact or block", mode)
}

func (c *piiCache) detector(o pii.Options) (*pii.Scanner, error) {
	key := strings.Join(o.Locales, ",") + "|" + strconv.FormatFloat(o.Threshold, 'g', -1, 64)
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := c.detectors[key]; d != nil {
		return d, nil
	}
	d, err := pii.New(&o)
	if err != nil {
		return nil, err
	}
	if c.detectors == nil {
		c.detectors = map[string]*pii.Scanner{}
	}
	c.detectors[key] = d
	return d, nil
}
