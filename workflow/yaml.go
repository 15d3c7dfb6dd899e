package workflow

import (
	"encoding/json"

	"go.yaml.in/yaml/v3"
)

// MarshalYAML writes def as block-style YAML that [Parse] reads back.
// Going through JSON keeps the definition's own field names and order
// (React Flow's, such as sourceHandle) and its JSON forms (a timeout as
// "90s").
func MarshalYAML(def *Definition) ([]byte, error) {
	j, err := json.Marshal(def)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(j, &doc); err != nil {
		return nil, err
	}
	blockStyle(&doc)
	return yaml.Marshal(&doc)
}

// blockStyle clears the flow and quoting styles the JSON input gave the
// nodes; the encoder quotes the strings that need it.
func blockStyle(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		blockStyle(c)
	}
}
