package skill

import (
	"embed"
	"io/fs"
	"slices"
	"strings"
	"sync"
)

// builtinFS holds the built-in skills, one folder each under builtin/.
//
//go:embed builtin
var builtinFS embed.FS

// builtins parses the embedded skills once.
var builtins = sync.OnceValue(func() []Skill {
	dirs, err := fs.ReadDir(builtinFS, "builtin")
	if err != nil {
		panic("skill: built-in skills: " + err.Error())
	}
	out := make([]Skill, 0, len(dirs))
	for _, d := range dirs {
		sub, err := fs.Sub(builtinFS, "builtin/"+d.Name())
		if err != nil {
			panic("skill: built-in skills: " + err.Error())
		}
		// The skills are files of this package, parsed by a test: a
		// failure here is a defect found before release, never input.
		s, err := FromFS(sub, d.Name(), nil)
		if err != nil {
			panic("skill: built-in skill " + d.Name() + ": " + err.Error())
		}
		s.Builtin = true
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	return out
})

// Builtins returns the skills embedded in the binary, ordered by name,
// with their files' data: japanese-business-email, meeting-notes and
// writing-style-guide. The slice and the skills are the caller's.
func Builtins() []Skill {
	src := builtins()
	out := make([]Skill, len(src))
	for i, s := range src {
		s.Files = slices.Clone(s.Files)
		out[i] = s
	}
	return out
}
