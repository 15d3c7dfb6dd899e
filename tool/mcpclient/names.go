package mcpclient

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// NameSeparator joins a server's name and its tool's name in the name the
// model sees: "github__create_issue".
const NameSeparator = "__"

// maxNameLen is the tool-name limit OpenAI and Anthropic share.
const maxNameLen = 64

// hashLen is the number of hex digits of the suffix that keeps shortened
// or colliding names apart.
const hashLen = 8

// ToolName maps an MCP server's tool onto a model-facing name: server and
// tool joined by NameSeparator, every character outside [A-Za-z0-9_-]
// replaced by '_'. A name longer than 64 characters keeps its first 55
// and ends in '_' and 8 hex digits of a hash of the original pair, so two
// long names that share a prefix stay distinct. The mapping is one way;
// the Manager keeps the reverse.
func ToolName(server, tool string) string {
	name := sanitize(server + NameSeparator + tool)
	if len(name) <= maxNameLen {
		return name
	}
	return hashed(name, server, tool)
}

// hashed shortens name to leave room for a hash suffix of server and tool.
func hashed(name, server, tool string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	keep := min(len(name), maxNameLen-hashLen-1)
	return name[:keep] + "_" + hex.EncodeToString(sum[:])[:hashLen]
}

func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, c := range s { // by rune: one '_' for each non-ASCII character
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// mapNames assigns model-facing names to one server's tools. A tool whose
// sanitized name another tool already took (such as "a.b" when "a_b"
// exists) gets the hash suffix too, so every tool stays reachable; tools
// whose names need no change are placed first, so that "a_b" keeps its
// plain name whatever order the server lists them in. The result maps
// model-facing name to the tool's own name; names[i] is tools[i]'s.
func mapNames(server string, tools []string) (names []string, reverse map[string]string) {
	names = make([]string, len(tools))
	reverse = make(map[string]string, len(tools))
	for pass := range 2 {
		for i, t := range tools {
			clean := sanitize(t) == t
			if (pass == 0) != clean {
				continue
			}
			n := ToolName(server, t)
			if _, taken := reverse[n]; taken {
				n = hashed(sanitize(server+NameSeparator+t), server, t)
			}
			names[i] = n
			reverse[n] = t
		}
	}
	return names, reverse
}
