package pii

import "testing"

// Each vector names its source. "Computed" vectors were worked out by hand
// with the published algorithm; the arithmetic is in the comment so a
// reviewer can redo it.
func TestValidators(t *testing.T) {
	tests := []struct {
		name  string
		valid func(string) bool
		in    string
		want  bool
	}{
		// Luhn (ISO/IEC 7812-1 Annex B).
		{"luhn visa", ValidLuhn, "4111111111111111", true},                // public Visa test number (Stripe/PayPal test cards)
		{"luhn visa spaced", ValidLuhn, "4111 1111 1111 1111", true},      // same, as printed on a card
		{"luhn mastercard", ValidLuhn, "5555555555554444", true},          // public Mastercard test number (Stripe test cards)
		{"luhn amex", ValidLuhn, "378282246310005", true},                 // public Amex test number (Stripe test cards)
		{"luhn last digit changed", ValidLuhn, "4111111111111112", false}, // one off the Visa test number: sum 31
		{"luhn transposed", ValidLuhn, "4111111111111121", false},         // computed: the doubled 2 adds 2, sum 32
		{"luhn too short", ValidLuhn, "42", false},
		{"luhn letters", ValidLuhn, "4111x11111111111", false},

		// IBAN, ISO 13616 / ISO 7064 mod 97-10.
		{"iban gb", ValidIBAN, "GB82WEST12345698765432", true},                 // SWIFT IBAN Registry example for GB
		{"iban gb print form", ValidIBAN, "GB82 WEST 1234 5698 7654 32", true}, // same, ECBS paper format
		{"iban de", ValidIBAN, "DE89370400440532013000", true},                 // SWIFT IBAN Registry example for DE
		{"iban gb wrong check", ValidIBAN, "GB82WEST12345698765433", false},    // registry example, last digit +1
		{"iban gb wrong length", ValidIBAN, "GB82WEST1234569876543", false},    // GB IBANs have 22 characters
		{"iban lower case", ValidIBAN, "gb82west12345698765432", false},
		{"iban bad check digits", ValidIBAN, "GB00WEST12345698765432", false},

		// Taiwan national ID (Ministry of the Interior algorithm).
		// A123456789: A=10 → 1×1+0×9 = 1; 1×8+2×7+3×6+4×5+5×4+6×3+7×2+8×1 = 120; +9 → 130, 130 mod 10 = 0.
		{"tw id", ValidTWNationalID, "A123456789", true},
		{"tw id wrong check", ValidTWNationalID, "A123456788", false}, // computed: sum 129
		// I100000003: I=34 → 3×1+4×9 = 39; 1×8 = 8; +3 → 50.
		{"tw id letter I", ValidTWNationalID, "I100000003", true},
		// A800000014 (2021 resident certificate): 1 + 8×8 + 1×1 + 4 = 70.
		{"tw resident certificate", ValidTWNationalID, "A800000014", true},
		{"tw id sex digit 3", ValidTWNationalID, "A323456789", false},
		{"tw id lower case", ValidTWNationalID, "a123456789", false},

		// Taiwan unified business number (Ministry of Finance, new rule from April 2023).
		// 04595257: products 0,8,5,18,5,4,20,7 → digit sums 0+8+5+9+5+4+2+7 = 40, divisible by 10 (old rule too).
		{"tw ubn", ValidTWBusinessNumber, "04595257", true},
		// 04595252: sum 35, divisible by 5 only: valid under the 2023 rule.
		{"tw ubn new rule only", ValidTWBusinessNumber, "04595252", true},
		// 10458574: products 1,0,4,10,8,10,28,4 → 1+0+4+1+8+1+10+4 = 29; 7th digit is 7, so 29+1 = 30.
		{"tw ubn seventh digit 7", ValidTWBusinessNumber, "10458574", true},
		{"tw ubn invalid", ValidTWBusinessNumber, "04595253", false},                 // computed: sum 36
		{"tw ubn seventh digit 7 invalid", ValidTWBusinessNumber, "10458573", false}, // computed: 28 or 29
		{"tw ubn seven digits", ValidTWBusinessNumber, "0459525", false},

		// JP My Number (総務省令第85号 第5条).
		// 123456789018: P(1..11) = 1,0,9,8,7,6,5,4,3,2,1; Q = 2,3,4,5,6,7,2,3,4,5,6;
		// Σ = 2+0+36+40+42+42+10+12+12+10+6 = 212; 212 mod 11 = 3; check = 11−3 = 8.
		{"jp my number", ValidJPMyNumber, "123456789018", true},
		{"jp my number spaced", ValidJPMyNumber, "1234 5678 9018", true},
		{"jp my number wrong check", ValidJPMyNumber, "123456789010", false},
		{"jp my number eleven digits", ValidJPMyNumber, "12345678901", false},

		// JP corporate number (National Tax Agency).
		// 7000012050002 is the NTA's own corporate number: P(1..12) = 2,0,0,0,5,0,2,1,0,0,0,0;
		// Σ P×Q (Q = 1,2,1,2,…) = 2+5+2+2 = 11; 9 − 11 mod 9 = 7.
		{"jp corporate number", ValidJPCorporateNumber, "7000012050002", true},
		{"jp corporate number wrong check", ValidJPCorporateNumber, "8000012050002", false},

		// KR resident registration number.
		// 900101-1234568: 9×2+0×3+0×4+1×5+0×6+1×7+1×8+2×9+3×2+4×3+5×4+6×5 = 124; 124 mod 11 = 3; (11−3) mod 10 = 8.
		{"kr rrn", ValidKRRRN, "900101-1234568", true},
		{"kr rrn without hyphen", ValidKRRRN, "9001011234568", true},
		{"kr rrn wrong check", ValidKRRRN, "900101-1234567", false}, // also how a post-2020 number can look
		{"kr rrn short", ValidKRRRN, "900101-123456", false},

		// KR business registration number (National Tax Service).
		// 123-45-67891: 1+6+21+4+15+42+7+24+45 = 165; ⌊9×5/10⌋ = 4 → 169; (10 − 9) mod 10 = 1.
		{"kr brn", ValidKRBusinessNumber, "123-45-67891", true},
		{"kr brn wrong check", ValidKRBusinessNumber, "123-45-67890", false},

		// UK NHS number (NHS Data Dictionary, mod 11).
		{"nhs", ValidUKNHSNumber, "9434765919", true},          // NHS Digital example number
		{"nhs spaced", ValidUKNHSNumber, "943 476 5919", true}, // same, as printed
		{"nhs wrong check", ValidUKNHSNumber, "9434765918", false},
		// 000000040x: 4×3 = 12, 12 mod 11 = 1 → check would be 10, which no NHS number has.
		{"nhs check ten", ValidUKNHSNumber, "0000000400", false},

		// US ABA routing number.
		// 021000021 (JPMorgan Chase, published): 0×3+2×7+1×1+0+0+0+0×3+2×7+1×1 = 30.
		{"aba", ValidABARouting, "021000021", true},
		// 011000015 (Federal Reserve Bank of Boston, published): 7+1+5+7 = 20.
		{"aba boston fed", ValidABARouting, "011000015", true},
		{"aba wrong check", ValidABARouting, "021000022", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.valid(tt.in); got != tt.want {
				t.Errorf("valid(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

// The legacy UBN rule (divisible by 10) is still accepted; a number valid
// only by the new rule is not valid by the old one.
func TestTWBusinessNumberLegacyRule(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"04595257", true},  // sum 40
		{"10458574", true},  // sum 29, 7th digit 7: 30
		{"10458575", true},  // sum 30 (28 read as 0)
		{"04595252", false}, // sum 35: new rule only
	}
	for _, tt := range tests {
		if got := ubnCheck(tt.in, 10); got != tt.want {
			t.Errorf("ubnCheck(%q, 10) = %v, want %v", tt.in, got, tt.want)
		}
		if !ValidTWBusinessNumber(tt.in) {
			t.Errorf("ValidTWBusinessNumber(%q) = false; every old-rule and new-rule number is valid now", tt.in)
		}
	}
}
