/**
 * The console's words in Korean and English. The server renders the page with
 * them, and hands the client script the ones it needs for live parts.
 */
import { FIELDS } from '../../excel/fields.js';
import { headerFor } from '../../report/template.js';

export type Lang = 'ko' | 'en';

/** Each column as that language's template heads it (a bad row's column is shown so). */
const columnsIn = (lang: Lang) => Object.fromEntries(FIELDS.map((f) => [f, headerFor(f, lang)])) as Record<string, string>;

const en = {
  title: 'Bulk product registration',
  opsTitle: 'Bulk registration: operator',
  seller: 'Seller',
  templateHead: '1. Get the template',
  templateText: 'Fill in the "products" sheet: one product per row, up to 500 rows. Row 2 is an example to replace.',
  templateKo: 'Template (Korean headers)',
  templateEn: 'Template (English headers)',
  sendHead: '2. Upload your sheet',
  drop: 'Drop an .xlsx file here, or tap to choose one',
  check: 'Check',
  register: 'Register',
  checking: 'Checking…',
  registering: 'Registering…',
  progressHead: '3. Progress',
  noUploads: 'No uploads yet.',
  chooseFirst: 'Choose a sheet first.',
  sellerFor: 'Seller id',
  sellerRequired: 'Enter the seller id the sheet belongs to.',
  rowsRead: 'rows read',
  valid: 'valid',
  invalid: 'with errors',
  enqueued: 'queued for registration',
  alreadyUploaded: 'This file was uploaded before for this seller: nothing new was queued.',
  allValid: 'Every row is valid.',
  noneValid: 'No row is valid: fix the rows below and check again.',
  fixRows: 'Fix these rows (the valid ones can be registered now):',
  rowLabel: 'Row',
  total: 'total',
  registered: 'registered',
  duplicate: 'duplicate',
  failed: 'failed',
  pending: 'pending',
  lost: 'lost (upload again)',
  state_waiting: 'waiting',
  state_running: 'registering',
  state_throttled: 'throttled by the rule',
  state_done: 'done',
  state_paused: 'paused',
  state_cancelled: 'cancelled',
  apiDown: 'The marketplace API is unavailable: rows are held, nothing fails. Since',
  cancelled: 'cancelled',
  cancel: 'Cancel',
  cancelConfirmText: 'Stop this upload? Rows not sent yet will not be registered.',
  cancelConfirm: 'Yes, cancel it',
  cancelKeep: 'Keep going',
  pause: 'Pause',
  pauseReason: 'reason (optional)',
  resume: 'Resume',
  resumeAll: 'Resume every seller',
  pausedBy_operator: 'paused by the operator',
  pausedBy_credentials: 'paused: the marketplace refused the credentials',
  ruleFrom_api: 'announced by the marketplace',
  ruleFrom_override: 'set by the operator',
  ruleFrom_config: 'default',
  nextPermit: 'next permit in',
  permitFree: 'permit free now',
  eta: 'done in about',
  paceRule: 'set by your rate rule',
  paceRuleOps: 'set by the seller\'s rule',
  pacePool: 'set by the worker pool',
  report: 'Result workbook',
  failedOnly: 'Rows to fix',
  rate: 'sent in the last window',
  per: 'per',
  pool: 'Worker pool',
  processesUp: 'processes up',
  noPool: 'No worker pool is running: rows wait until one starts.',
  failuresHead: 'Failures by reason',
  noFailures: 'No failed rows.',
  sellersHead: 'Sellers',
  filter: 'Filter by seller',
  showing: 'showing',
  of: 'of',
  live: 'live',
  offline: 'reconnecting…',
  uploadFor: 'Upload for a seller',
  forbidden: 'This link is not valid: it was changed or it has expired. Ask the marketplace operator for a new link.',
  signIn: 'Operator access needs the token: open /ops?token=<CONSOLE_OPERATOR_TOKEN>.',
  language: 'Language',
  columns: columnsIn('en'),
};

const ko: typeof en = {
  title: '상품 일괄 등록',
  opsTitle: '상품 일괄 등록: 운영자',
  seller: '판매자',
  templateHead: '1. 템플릿 받기',
  templateText: '"상품" 시트에 한 줄에 한 상품씩, 최대 500줄까지 입력하세요. 2행은 예시이니 지우고 쓰세요.',
  templateKo: '템플릿 (한국어 머리글)',
  templateEn: '템플릿 (영어 머리글)',
  sendHead: '2. 시트 올리기',
  drop: '.xlsx 파일을 여기에 끌어다 놓거나 눌러서 고르세요',
  check: '검사',
  register: '등록',
  checking: '검사 중…',
  registering: '등록 중…',
  progressHead: '3. 진행 상황',
  noUploads: '아직 올린 시트가 없습니다.',
  chooseFirst: '먼저 시트를 고르세요.',
  sellerFor: '판매자 ID',
  sellerRequired: '시트의 판매자 ID를 입력하세요.',
  rowsRead: '읽은 행',
  valid: '정상',
  invalid: '오류',
  enqueued: '등록 대기열에 넣음',
  alreadyUploaded: '이 판매자로 이미 올린 파일입니다. 새로 넣은 행은 없습니다.',
  allValid: '모든 행이 정상입니다.',
  noneValid: '정상 행이 없습니다. 아래 행을 고친 뒤 다시 검사하세요.',
  fixRows: '다음 행을 고치세요 (정상 행은 지금 등록할 수 있습니다):',
  rowLabel: '행',
  total: '전체',
  registered: '등록',
  duplicate: '중복',
  failed: '실패',
  pending: '대기',
  lost: '유실 (다시 올리세요)',
  state_waiting: '대기 중',
  state_running: '등록 중',
  state_throttled: '속도 제한 대기',
  state_done: '완료',
  state_paused: '일시 중지',
  state_cancelled: '취소됨',
  apiDown: '마켓 API에 연결할 수 없어 행을 보류 중입니다 (실패 없음). 시작:',
  cancelled: '취소',
  cancel: '취소',
  cancelConfirmText: '이 업로드를 멈출까요? 아직 보내지 않은 행은 등록되지 않습니다.',
  cancelConfirm: '네, 취소합니다',
  cancelKeep: '계속 진행',
  pause: '일시 중지',
  pauseReason: '사유 (선택)',
  resume: '재개',
  resumeAll: '모든 판매자 재개',
  pausedBy_operator: '운영자가 일시 중지함',
  pausedBy_credentials: '일시 중지: 마켓이 인증 정보를 거부함',
  ruleFrom_api: '마켓이 알린 규칙',
  ruleFrom_override: '운영자가 정한 규칙',
  ruleFrom_config: '기본 규칙',
  nextPermit: '다음 허용까지',
  permitFree: '지금 보낼 수 있음',
  eta: '완료 예상',
  paceRule: '판매자 속도 제한 기준',
  paceRuleOps: '판매자 속도 제한 기준',
  pacePool: '작업자 풀 기준',
  report: '결과 파일',
  failedOnly: '고칠 행만',
  rate: '최근 한 구간에 보냄',
  per: '/',
  pool: '작업자 풀',
  processesUp: '개 프로세스 실행 중',
  noPool: '실행 중인 작업자 풀이 없습니다. 풀이 시작될 때까지 행이 기다립니다.',
  failuresHead: '실패 사유별',
  noFailures: '실패한 행이 없습니다.',
  sellersHead: '판매자',
  filter: '판매자 검색',
  showing: '표시',
  of: '/',
  live: '실시간',
  offline: '다시 연결 중…',
  uploadFor: '판매자 대신 올리기',
  forbidden: '유효하지 않은 링크입니다. 바뀌었거나 기간이 지났습니다. 마켓 운영자에게 새 링크를 요청하세요.',
  signIn: '운영자 화면은 토큰이 필요합니다: /ops?token=<CONSOLE_OPERATOR_TOKEN> 으로 여세요.',
  language: '언어',
  columns: columnsIn('ko'),
};

export type Strings = typeof en;
export const STRINGS: Record<Lang, Strings> = { en, ko };

/** The language: an explicit choice (query or cookie) first, then the browser's Accept-Language; English otherwise. */
export function pickLang(chosen: string | undefined, acceptLanguage: string | undefined): Lang {
  if (chosen === 'ko' || chosen === 'en') return chosen;
  const ranked = (acceptLanguage ?? '')
    .split(',')
    .map((part) => {
      const [tag, ...params] = part.trim().toLowerCase().split(';');
      const q = params.map((p) => /^q=([\d.]+)$/.exec(p.trim())?.[1]).find(Boolean);
      return { tag: tag ?? '', q: q === undefined ? 1 : Number(q) };
    })
    .filter((x) => x.q > 0)
    .sort((a, b) => b.q - a.q);
  for (const { tag } of ranked) {
    if (tag === 'ko' || tag.startsWith('ko-')) return 'ko';
    if (tag === 'en' || tag.startsWith('en-')) return 'en';
  }
  return 'en';
}
