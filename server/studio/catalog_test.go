package studio_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// flatten turns a nested i18next catalogue into "a.b" → text.
func flatten(prefix string, v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			flatten(prefix+k+".", child, out)
		}
	case string:
		out[prefix[:len(prefix)-1]] = x
	}
}

// catalog reads web/src/locales/<lang>/*.json: each file holds the keys
// under its name (chat.json is chat.*).
func catalog(t *testing.T, lang string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "web", "src", "locales", lang, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no catalogue files for %s: %v", lang, err)
	}
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		flatten(strings.TrimSuffix(filepath.Base(f), ".json")+".", v, out)
	}
	return out
}

// TestCatalogsComplete: ja and zh-TW translate every key of en, and no
// translation is left as the English text (the product name excepted).
func TestCatalogsComplete(t *testing.T) {
	en := catalog(t, "en")
	if len(en) < 20 {
		t.Fatalf("locales/en has %d strings; the catalogue did not load", len(en))
	}
	sameAsEnglish := map[string]bool{"app.name": true}
	for _, lang := range []string{"ja", "zh-TW"} {
		c := catalog(t, lang)
		for _, k := range slices.Sorted(maps.Keys(en)) {
			switch tr, ok := c[k]; {
			case !ok || tr == "":
				t.Errorf("locales/%s lacks %s (en: %q)", lang, k, en[k])
			case tr == en[k] && !sameAsEnglish[k]:
				t.Errorf("locales/%s leaves %s in English: %q", lang, k, tr)
			}
		}
		for k := range c {
			if _, ok := en[k]; !ok {
				t.Errorf("locales/%s has %s, which locales/en lacks", lang, k)
			}
		}
	}
}
