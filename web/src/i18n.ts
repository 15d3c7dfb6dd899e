import i18n from 'i18next'
import { initReactI18next } from 'react-i18next'
import en from './locales/en.json'
import ja from './locales/ja.json'
import zhTW from './locales/zh-TW.json'

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

i18n.use(initReactI18next).init({
  resources: { en: { translation: en }, ja: { translation: ja }, 'zh-TW': { translation: zhTW } },
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
