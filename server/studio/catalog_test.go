package studio_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
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

func catalog(t *testing.T, lang string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "web", "src", "locales", lang+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s.json: %v", lang, err)
	}
	out := map[string]string{}
	flatten("", v, out)
	return out
}

// TestCatalogsComplete: ja and zh-TW translate every key of en, and no
// translation is left as the English text (the product name excepted).
func TestCatalogsComplete(t *testing.T) {
	en := catalog(t, "en")
	if len(en) < 20 {
		t.Fatalf("en.json has %d strings; the catalogue did not load", len(en))
	}
	sameAsEnglish := map[string]bool{"app.name": true}
	for _, lang := range []string{"ja", "zh-TW"} {
		c := catalog(t, lang)
		for _, k := range slices.Sorted(maps.Keys(en)) {
			switch tr, ok := c[k]; {
			case !ok || tr == "":
				t.Errorf("%s.json lacks %s (en: %q)", lang, k, en[k])
			case tr == en[k] && !sameAsEnglish[k]:
				t.Errorf("%s.json leaves %s in English: %q", lang, k, tr)
			}
		}
		for k := range c {
			if _, ok := en[k]; !ok {
				t.Errorf("%s.json has %s, which en.json lacks", lang, k)
			}
		}
	}
}
