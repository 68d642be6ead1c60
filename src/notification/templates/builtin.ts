/**
 * The templates shipped with nostr-push. `en` is the wire contract of reference §7.2 byte for
 * byte (divine's clients compare these strings); it is complete, so every other locale may leave
 * messages out and fall back to it. The others are translations for people, not word lists: each
 * follows its language's own typography (quotes, colons, apostrophes) and plural forms.
 *
 * "vine" is the app's name for a video and stays a product word in every language.
 */
import type { LocaleTemplates } from './messages.ts';

const NBSP = '\u00a0';

export const EN_TEMPLATES: LocaleTemplates = {
  like: { title: 'New like', body: '{sender} liked your post' },
  comment: { title: 'New comment', body: '{sender}: {content}' },
  mention: { title: 'You were mentioned', body: '{sender}: {content}' },
  repost: { title: 'New repost', body: '{sender} reposted your post' },
  // Provisional wording; the body must stay non-empty or the app drops foreground pushes.
  newPost: { title: 'New vine', body: '{sender} posted a new vine' },
  directMessage: { title: 'New message', body: 'You have a new message' },
  keyword: { title: 'Alert word', body: '{sender} mentioned “{word}”' },
  relayEvent: { title: 'New activity', body: 'New activity on {relay}' },
  relayEventWithoutRelay: { title: 'New activity', body: 'New activity' },
  likeSummary: {
    title: 'New likes',
    body: { one: '{sender} and {count} other liked your post', other: '{sender} and {count} others liked your post' },
  },
  repostSummary: {
    title: 'New reposts',
    body: { one: '{sender} and {count} other reposted your post', other: '{sender} and {count} others reposted your post' },
  },
  // Kind-1 notes and zaps (issue 21).
  reply: { title: '{sender} replied', body: '{content}' },
  replyWithoutText: { title: '{sender} replied', body: 'Replied to your note' },
  noteMention: { title: '{sender} mentioned you', body: '{content}' },
  noteMentionWithoutText: { title: '{sender} mentioned you', body: 'Mentioned you in a note' },
  zap: { title: 'New zap', body: '{sender} zapped you ⚡{sats} sats' },
  zapWithoutAmount: { title: 'New zap', body: '{sender} zapped you' },
  zapSummary: {
    title: 'New zaps',
    body: { one: '{sender} and {count} other zapped you', other: '{sender} and {count} others zapped you' },
  },
  someone: { name: 'Someone' },
};

/** Spanish: `many` is CLDR's form for a million and up; with digits it reads as `other`. */
const ES_TEMPLATES: LocaleTemplates = {
  like: { title: 'Nuevo me gusta', body: 'A {sender} le gustó tu publicación' },
  comment: { title: 'Nuevo comentario', body: '{sender}: {content}' },
  mention: { title: 'Te mencionaron', body: '{sender}: {content}' },
  repost: { title: 'Nueva republicación', body: '{sender} republicó tu publicación' },
  newPost: { title: 'Nuevo vine', body: '{sender} publicó un vine nuevo' },
  directMessage: { title: 'Nuevo mensaje', body: 'Tienes un mensaje nuevo' },
  keyword: { title: 'Palabra de alerta', body: '{sender} mencionó «{word}»' },
  relayEvent: { title: 'Nueva actividad', body: 'Nueva actividad en {relay}' },
  relayEventWithoutRelay: { title: 'Nueva actividad', body: 'Hay actividad nueva' },
  likeSummary: {
    title: 'Nuevos me gusta',
    body: {
      one: 'A {sender} y a {count} persona más les gustó tu publicación',
      many: 'A {sender} y a {count} personas más les gustó tu publicación',
      other: 'A {sender} y a {count} personas más les gustó tu publicación',
    },
  },
  repostSummary: {
    title: 'Nuevas republicaciones',
    body: {
      one: '{sender} y {count} persona más republicaron tu publicación',
      many: '{sender} y {count} personas más republicaron tu publicación',
      other: '{sender} y {count} personas más republicaron tu publicación',
    },
  },
  reply: { title: '{sender} respondió', body: '{content}' },
  replyWithoutText: { title: '{sender} respondió', body: 'Respondió a tu nota' },
  noteMention: { title: '{sender} te mencionó', body: '{content}' },
  noteMentionWithoutText: { title: '{sender} te mencionó', body: 'Te mencionó en una nota' },
  zap: { title: 'Nuevo zap', body: '{sender} te envió un zap de ⚡{sats} sats' },
  zapWithoutAmount: { title: 'Nuevo zap', body: '{sender} te envió un zap' },
  zapSummary: {
    title: 'Nuevos zaps',
    body: {
      one: '{sender} y {count} persona más te enviaron zaps',
      many: '{sender} y {count} personas más te enviaron zaps',
      other: '{sender} y {count} personas más te enviaron zaps',
    },
  },
  someone: { name: 'Alguien' },
};

/** Portuguese as written in Brazil (the larger audience); 0 and 1 take the singular there. */
const PT_TEMPLATES: LocaleTemplates = {
  like: { title: 'Nova curtida', body: '{sender} curtiu sua publicação' },
  comment: { title: 'Novo comentário', body: '{sender}: {content}' },
  mention: { title: 'Mencionaram você', body: '{sender}: {content}' },
  repost: { title: 'Nova republicação', body: '{sender} republicou sua publicação' },
  newPost: { title: 'Novo vine', body: '{sender} publicou um novo vine' },
  directMessage: { title: 'Nova mensagem', body: 'Você tem uma nova mensagem' },
  keyword: { title: 'Palavra de alerta', body: '{sender} mencionou “{word}”' },
  relayEvent: { title: 'Nova atividade', body: 'Nova atividade em {relay}' },
  relayEventWithoutRelay: { title: 'Nova atividade', body: 'Há uma nova atividade' },
  likeSummary: {
    title: 'Novas curtidas',
    body: {
      one: '{sender} e mais {count} pessoa curtiram sua publicação',
      many: '{sender} e mais {count} pessoas curtiram sua publicação',
      other: '{sender} e mais {count} pessoas curtiram sua publicação',
    },
  },
  repostSummary: {
    title: 'Novas republicações',
    body: {
      one: '{sender} e mais {count} pessoa republicaram sua publicação',
      many: '{sender} e mais {count} pessoas republicaram sua publicação',
      other: '{sender} e mais {count} pessoas republicaram sua publicação',
    },
  },
  reply: { title: '{sender} respondeu', body: '{content}' },
  replyWithoutText: { title: '{sender} respondeu', body: 'Respondeu à sua nota' },
  noteMention: { title: '{sender} mencionou você', body: '{content}' },
  noteMentionWithoutText: { title: '{sender} mencionou você', body: 'Mencionou você em uma nota' },
  zap: { title: 'Novo zap', body: '{sender} enviou um zap de ⚡{sats} sats para você' },
  zapWithoutAmount: { title: 'Novo zap', body: '{sender} enviou um zap para você' },
  zapSummary: {
    title: 'Novos zaps',
    body: {
      one: '{sender} e mais {count} pessoa enviaram zaps para você',
      many: '{sender} e mais {count} pessoas enviaram zaps para você',
      other: '{sender} e mais {count} pessoas enviaram zaps para você',
    },
  },
  someone: { name: 'Alguém' },
};

/** German, informal ("du") as social apps address their users. */
const DE_TEMPLATES: LocaleTemplates = {
  like: { title: 'Neues „Gefällt mir“', body: '{sender} hat deinen Beitrag mit „Gefällt mir“ markiert' },
  comment: { title: 'Neuer Kommentar', body: '{sender}: {content}' },
  mention: { title: 'Du wurdest erwähnt', body: '{sender}: {content}' },
  repost: { title: 'Neuer Repost', body: '{sender} hat deinen Beitrag geteilt' },
  newPost: { title: 'Neues Vine', body: '{sender} hat ein neues Vine gepostet' },
  directMessage: { title: 'Neue Nachricht', body: 'Du hast eine neue Nachricht' },
  keyword: { title: 'Stichwort', body: '{sender} hat „{word}“ erwähnt' },
  relayEvent: { title: 'Neue Aktivität', body: 'Neue Aktivität auf {relay}' },
  relayEventWithoutRelay: { title: 'Neue Aktivität', body: 'Es gibt neue Aktivität' },
  likeSummary: {
    title: 'Neue „Gefällt mir“-Angaben',
    body: {
      one: '{sender} und {count} weitere Person haben deinen Beitrag mit „Gefällt mir“ markiert',
      other: '{sender} und {count} weitere Personen haben deinen Beitrag mit „Gefällt mir“ markiert',
    },
  },
  repostSummary: {
    title: 'Neue Reposts',
    body: {
      one: '{sender} und {count} weitere Person haben deinen Beitrag geteilt',
      other: '{sender} und {count} weitere Personen haben deinen Beitrag geteilt',
    },
  },
  reply: { title: '{sender} hat geantwortet', body: '{content}' },
  replyWithoutText: { title: '{sender} hat geantwortet', body: 'Antwort auf deine Notiz' },
  noteMention: { title: '{sender} hat dich erwähnt', body: '{content}' },
  noteMentionWithoutText: { title: '{sender} hat dich erwähnt', body: 'Hat dich in einer Notiz erwähnt' },
  zap: { title: 'Neuer Zap', body: '{sender} hat dir ⚡{sats} Sats gezappt' },
  zapWithoutAmount: { title: 'Neuer Zap', body: '{sender} hat dir einen Zap geschickt' },
  zapSummary: {
    title: 'Neue Zaps',
    body: {
      one: '{sender} und {count} weitere Person haben dir Zaps geschickt',
      other: '{sender} und {count} weitere Personen haben dir Zaps geschickt',
    },
  },
  someone: { name: 'Jemand' },
};

/** French, with "vous"; 0 takes the singular, guillemets hold no-break spaces. */
const FR_TEMPLATES: LocaleTemplates = {
  like: { title: 'Nouveau j’aime', body: '{sender} a aimé votre publication' },
  comment: { title: 'Nouveau commentaire', body: `{sender}${NBSP}: {content}` },
  mention: { title: 'Nouvelle mention', body: `{sender}${NBSP}: {content}` },
  repost: { title: 'Nouveau partage', body: '{sender} a partagé votre publication' },
  newPost: { title: 'Nouveau vine', body: '{sender} a publié un nouveau vine' },
  directMessage: { title: 'Nouveau message', body: 'Vous avez un nouveau message' },
  keyword: { title: 'Mot d’alerte', body: `{sender} a mentionné «${NBSP}{word}${NBSP}»` },
  relayEvent: { title: 'Nouvelle activité', body: 'Nouvelle activité sur {relay}' },
  relayEventWithoutRelay: { title: 'Nouvelle activité', body: 'Il y a une nouvelle activité' },
  likeSummary: {
    title: 'Nouveaux j’aime',
    body: {
      one: '{sender} et {count} autre personne ont aimé votre publication',
      many: '{sender} et {count} autres personnes ont aimé votre publication',
      other: '{sender} et {count} autres personnes ont aimé votre publication',
    },
  },
  repostSummary: {
    title: 'Nouveaux partages',
    body: {
      one: '{sender} et {count} autre personne ont partagé votre publication',
      many: '{sender} et {count} autres personnes ont partagé votre publication',
      other: '{sender} et {count} autres personnes ont partagé votre publication',
    },
  },
  reply: { title: '{sender} a répondu', body: '{content}' },
  replyWithoutText: { title: '{sender} a répondu', body: 'A répondu à votre note' },
  noteMention: { title: '{sender} vous a mentionné', body: '{content}' },
  noteMentionWithoutText: { title: '{sender} vous a mentionné', body: 'Vous a mentionné dans une note' },
  zap: { title: 'Nouveau zap', body: `{sender} vous a zappé ⚡{sats}${NBSP}sats` },
  zapWithoutAmount: { title: 'Nouveau zap', body: '{sender} vous a envoyé un zap' },
  zapSummary: {
    title: 'Nouveaux zaps',
    body: {
      one: '{sender} et {count} autre personne vous ont envoyé des zaps',
      many: '{sender} et {count} autres personnes vous ont envoyé des zaps',
      other: '{sender} et {count} autres personnes vous ont envoyé des zaps',
    },
  },
  someone: { name: 'Quelqu’un' },
};

/** Japanese has one plural form; full-width colon and corner brackets. */
const JA_TEMPLATES: LocaleTemplates = {
  like: { title: '新しいいいね', body: '{sender}があなたの投稿にいいねしました' },
  comment: { title: '新しいコメント', body: '{sender}：{content}' },
  mention: { title: 'メンションされました', body: '{sender}：{content}' },
  repost: { title: '新しいリポスト', body: '{sender}があなたの投稿をリポストしました' },
  newPost: { title: '新しいVine', body: '{sender}が新しいVineを投稿しました' },
  directMessage: { title: '新しいメッセージ', body: '新しいメッセージがあります' },
  keyword: { title: 'アラートワード', body: '{sender}が「{word}」に言及しました' },
  relayEvent: { title: '新しいアクティビティ', body: '{relay}に新しいアクティビティがあります' },
  relayEventWithoutRelay: { title: '新しいアクティビティ', body: '新しいアクティビティがあります' },
  likeSummary: { title: '新しいいいね', body: { other: '{sender}とほか{count}人があなたの投稿にいいねしました' } },
  repostSummary: { title: '新しいリポスト', body: { other: '{sender}とほか{count}人があなたの投稿をリポストしました' } },
  reply: { title: '{sender}が返信しました', body: '{content}' },
  replyWithoutText: { title: '{sender}が返信しました', body: 'あなたのノートに返信しました' },
  noteMention: { title: '{sender}があなたをメンションしました', body: '{content}' },
  noteMentionWithoutText: { title: '{sender}があなたをメンションしました', body: 'ノートであなたをメンションしました' },
  zap: { title: '新しいZap', body: '{sender}から⚡{sats} satsのZapが届きました' },
  zapWithoutAmount: { title: '新しいZap', body: '{sender}からZapが届きました' },
  zapSummary: { title: '新しいZap', body: { other: '{sender}とほか{count}人からZapが届きました' } },
  someone: { name: '誰か' },
};

/** The shipped locales, `en` first: the last resort of every fallback chain. */
export const BUILTIN_TEMPLATES: Readonly<Record<string, LocaleTemplates>> = {
  en: EN_TEMPLATES,
  es: ES_TEMPLATES,
  pt: PT_TEMPLATES,
  de: DE_TEMPLATES,
  fr: FR_TEMPLATES,
  ja: JA_TEMPLATES,
};

/** The locale every chain ends in, whose templates are complete. */
export const BASE_LOCALE = 'en';
