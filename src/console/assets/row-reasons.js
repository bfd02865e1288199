// The sheet's row errors in the page's language. The API and the CLI keep them
// in English (`upload --json` is a contract); the console shows a Korean seller
// the same reason in Korean, beside the column under its Korean header (the
// page's strings, `columns`; so the Korean sentence does not name the column). Only the sheet rules' own
// sentences (src/excel/parse-products.ts) are translated: any other text, such
// as a reason the marketplace's API gave, is shown as it came.

const FIELD = '(sku|name|price|stock|category|brand|description|imageUrl)';

/** [the English sentence, its Korean]: `$n` is the n-th group (group 1: the field). First match wins. */
const KO_RULES = [
  [`^${FIELD} is required$`, '필수 항목입니다. 값을 입력하세요'],
  [`^${FIELD} holds a date; dates are not valid values, type the text instead$`, '날짜가 들어 있습니다. 날짜는 쓸 수 없으니 글자로 입력하세요'],
  [`^${FIELD} holds a date; dates are not valid values$`, '날짜가 들어 있습니다. 날짜는 쓸 수 없습니다'],
  [`^${FIELD} must be at most ([\\d,]+) characters \\(got ([\\d,]+)\\)$`, '최대 $2자까지 입력할 수 있습니다 (입력: $3자)'],
  [`^${FIELD} must be a whole number from ([\\d,-]+) to ([\\d,]+); (.+) is not a whole number$`, '$2 ~ $3 사이의 정수여야 합니다 ($4: 정수가 아님)'],
  [`^${FIELD} must be a whole number from ([\\d,-]+) to ([\\d,]+) \\(got (.*)\\); a decimal comma or a misplaced thousands separator is not accepted: type the number without separators$`,
    '$2 ~ $3 사이의 정수여야 합니다 (입력: $4). 소수점 쉼표나 잘못된 자리의 천 단위 구분 기호는 쓸 수 없으니 구분 기호 없이 숫자만 입력하세요'],
  [`^${FIELD} must be a whole number from ([\\d,-]+) to ([\\d,]+) \\(got (.*)\\)$`, '$2 ~ $3 사이의 정수여야 합니다 (입력: $4)'],
  [`^${FIELD} must be an http or https URL \\(got (.*)\\)$`, 'http 또는 https로 시작하는 주소여야 합니다 (입력: $2)'],
  [`^duplicate sku, first seen in row (\\d+)$`, '같은 판매자상품코드가 $1행에 이미 있습니다'],
  [`^${FIELD} holds (?:the error )?(.+)$`, '셀에 $2 오류가 있습니다. 수식 대신 값을 입력하세요'],
].map(([pattern, ko]) => [new RegExp(pattern, 's'), ko]);

/** The row error's reason in `lang` ('ko' or 'en'). */
export function rowReason(message, lang) {
  if (lang !== 'ko') return message;
  for (const [re, ko] of KO_RULES) {
    const m = re.exec(message);
    if (!m) continue;
    return ko.replace(/\$(\d)/g, (_, n) => m[Number(n)] ?? '');
  }
  return message;
}
