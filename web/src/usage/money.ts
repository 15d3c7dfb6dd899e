// Amounts of money as the studio shows them: in the server's currency,
// in the page's language, with as many decimals as a small amount needs.

/** mostDecimals is the server's precision: costs are whole nano-units. */
const mostDecimals = 9

// significant is how many digits of an amount below one unit are kept:
// a request costs fractions of a cent, and "$0.00" for 0.00075 USD would
// say it was free.
const significant = 6

/**
 * moneyFormat returns a formatter of amounts of currency (an ISO 4217
 * code such as "USD") in lang. An amount of one unit or more shows the
 * currency's usual decimals ($12.35, ¥1,235); a smaller one as many as
 * it takes to show six significant digits, trailing zeros dropped
 * ($0.00075, $0.024848: a cost made of per-million prices is exact). A code Intl does not know shows as "0.5 XYZ",
 * rather than failing the page.
 */
export function moneyFormat(lang: string, currency: string): (amount: number) => string {
  let usual: Intl.NumberFormat
  try {
    usual = new Intl.NumberFormat(lang, { style: 'currency', currency })
  } catch {
    const plain = new Intl.NumberFormat(lang, { maximumFractionDigits: mostDecimals })
    return (amount) => plain.format(amount) + ' ' + currency
  }
  const base = usual.resolvedOptions().maximumFractionDigits ?? 2
  const precise = new Map<number, Intl.NumberFormat>()
  return (amount) => {
    const a = Math.abs(amount)
    if (a === 0 || a >= 1) return usual.format(amount)
    const digits = Math.min(mostDecimals, Math.max(base, Math.ceil(-Math.log10(a)) + significant - 1))
    let f = precise.get(digits)
    if (!f) {
      f = new Intl.NumberFormat(lang, { style: 'currency', currency, minimumFractionDigits: base, maximumFractionDigits: digits })
      precise.set(digits, f)
    }
    return f.format(amount)
  }
}
