package rank

import (
	"encoding/json"
	"fmt"

	"github.com/agentcraftlab/agentcraft/search"
)

// Rows is a *sql.Rows or a pgx.Rows.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// Collect reads rows of (row id, document id, title, text, metadata as a
// JSON object or NULL) into the hits of cands, in the order of cands; pos
// maps a row id to its candidate, and name gives a candidate's index name.
// A row of no candidate is skipped, a candidate without a row left out.
// The caller closes rows.
func Collect[I any](rows Rows, cands []Candidate[I], pos map[int64]int, name func(I) string) ([]search.Hit, error) {
	out := make([]search.Hit, len(cands))
	found := make([]bool, len(cands))
	for rows.Next() {
		var id int64
		var h search.Hit
		var meta []byte
		if err := rows.Scan(&id, &h.ID, &h.Title, &h.Text, &meta); err != nil {
			return nil, err
		}
		i, ok := pos[id]
		if !ok {
			continue
		}
		if meta != nil {
			h.Metadata = map[string]string{}
			if err := json.Unmarshal(meta, &h.Metadata); err != nil {
				return nil, fmt.Errorf("document %q: decode metadata: %w", h.ID, err)
			}
		}
		h.Index = name(cands[i].Index)
		h.Score = cands[i].Score
		out[i] = h
		found[i] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	n := 0
	for i := range out {
		if found[i] {
			out[n] = out[i]
			n++
		}
	}
	return out[:n], nil
}
