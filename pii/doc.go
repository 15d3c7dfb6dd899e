// Package pii finds personal data in text and masks it before a prompt
// reaches a model provider, then restores it in the reply.
//
// A [Scanner] (the [Detector] shipped here) runs locale rules — Global, TW,
// JP, KR, US and UK — over UTF-8 text and returns [Entity] values with byte
// offsets and a score. Numbers with a published check digit (cards, IBAN,
// Taiwan ID and business number, Japanese My Number and corporate number,
// Korean resident registration number, NHS number …) are validated, and
// context words near a match ("phone", "電話", "マイナンバー", "身分證" …)
// raise its score; entities under the threshold are dropped.
//
// A [Masker] replaces each entity with a typed token such as [EMAIL_1],
// remembered in a [TokenVault] that lives as long as one conversation, so the
// same value always gets the same token. [Masker.Restore] puts the values
// back into a complete reply; a [StreamRestorer] does the same for a reply
// that arrives in chunks, holding back only a possible partial token:
//
//	s, _ := pii.New(nil)
//	m, _ := pii.NewMasker(s, nil) // one Masker (and vault) per conversation
//	masked, ents := m.Mask(prompt)
//	log.Print(pii.AuditLine("input", ents)) // never contains a value
//	r := pii.NewStreamRestorer(m.Vault())
//	for chunk := range reply {
//		w.Write([]byte(r.Write(chunk)))
//	}
//	w.Write([]byte(r.Flush()))
//
// In [Irreversible] mode values become "***" and nothing is stored.
package pii
