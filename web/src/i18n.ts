import i18n from 'i18next'
import { initReactI18next } from 'react-i18next'

/** languages the studio speaks, with each one's name in itself. */
export const languages = [
  { code: 'en', name: 'English' },
  { code: 'ja', name: '日本語' },
  { code: 'zh-TW', name: '繁體中文' },
] as const

const storageKey = 'agentcraft.language'

function initialLanguage(): string {
  const saved = localStorage.getItem(storageKey)
  if (saved && languages.some((l) => l.code === saved)) return saved
  for (const l of navigator.languages ?? []) {
    if (l.startsWith('ja')) return 'ja'
    if (l === 'zh-TW' || l.startsWith('zh-Hant')) return 'zh-TW'
  }
  return 'en'
}

// The catalogue is one file per area and language, locales/<lang>/<area>.json,
// each holding the keys under <area> (locales/ja/chat.json is chat.* in
// Japanese), so pages add their strings without touching each other's.
const files = import.meta.glob<Record<string, unknown>>('./locales/*/*.json', { eager: true, import: 'default' })
const resources: Record<string, { translation: Record<string, unknown> }> = {}
for (const [path, strings] of Object.entries(files)) {
  const [, lang, area] = /\.\/locales\/([^/]+)\/([^/]+)\.json$/.exec(path)!
  resources[lang] ??= { translation: {} }
  resources[lang].translation[area] = strings
}

i18n.use(initReactI18next).init({
  resources,
  lng: initialLanguage(),
  fallbackLng: 'en',
  interpolation: { escapeValue: false }, // React escapes
  returnNull: false,
})

document.documentElement.lang = i18n.language
i18n.on('languageChanged', (lng) => {
  localStorage.setItem(storageKey, lng)
  document.documentElement.lang = lng
})

export default i18n
