package llmtest

import "flag"

// update rewrites the golden transcripts under testdata instead of
// comparing against them: go test ./llm/llmtest -update.
var update = flag.Bool("update", false, "rewrite golden files under testdata")
