// The sheet's row errors, its refusals of a whole file, its warnings and the
// console API's other refusals a seller can meet, in the page's language. The
// API and the CLI keep them in English (`upload --json` is a contract); the
// console shows a Korean seller the same reason in Korean, a row's beside the
// column under its Korean header (the page's strings, `columns`; so the Korean
// sentence does not name the column). Only the sentences of the sheet reader
// (src/excel/) and of the console's server are translated: any other text, such
// as a reason the marketplace's API gave, is shown as it came.

const FIELD = '(sku|name|price|stock|category|brand|description|imageUrl)';

/** [the English sentence, its Korean]: `$n` is the n-th group (group 1: the field). First match wins. */
const KO_RULES = [
  [`^${FIELD} is required \\(([A-Z]+\\d+) is part of the merged cells ([A-Z]+\\d+:[A-Z]+\\d+), whose one value is in ([A-Z]+\\d+): unmerge them and type the value in each cell\\)$`,
    '필수 항목입니다. $2 셀은 병합된 셀 $3에 속해 있어 값은 $4에만 있습니다. 병합을 해제하고 각 셀에 값을 입력하세요'],
  [`^${FIELD} is required$`, '필수 항목입니다. 값을 입력하세요'],
  [`^${FIELD} holds a date; dates are not valid values, type the text instead$`, '날짜가 들어 있습니다. 날짜는 쓸 수 없으니 글자로 입력하세요'],
  [`^${FIELD} holds a date; dates are not valid values$`, '날짜가 들어 있습니다. 날짜는 쓸 수 없습니다'],
  [`^${FIELD} must be at most ([\\d,]+) characters \\(got ([\\d,]+)\\)$`, '최대 $2자까지 입력할 수 있습니다 (입력: $3자)'],
  [`^${FIELD} must be a whole number from ([\\d,-]+) to ([\\d,]+); (.+) is not a whole number$`, '$2 ~ $3 사이의 정수여야 합니다 ($4: 정수가 아님)'],
  [`^${FIELD} must be a whole number from ([\\d,-]+) to ([\\d,]+) \\(got (.*)\\); a decimal comma or a misplaced thousands separator is not accepted: type the number without separators$`,
    '$2 ~ $3 사이의 정수여야 합니다 (입력: $4). 소수점 쉼표나 잘못된 자리의 천 단위 구분 기호는 쓸 수 없으니 구분 기호 없이 숫자만 입력하세요'],
  [`^${FIELD} must be a whole number from ([\\d,-]+) to ([\\d,]+) \\(got (.*)\\); remove the currency sign or unit \\((.*)\\) and type the number only$`,
    '$2 ~ $3 사이의 정수여야 합니다 (입력: $4). 통화 기호나 단위($5)를 빼고 숫자만 입력하세요'],
  [`^${FIELD} must be a whole number from ([\\d,-]+) to ([\\d,]+) \\(got (.*)\\); a dot between digit groups is a thousands separator in some countries and a decimal point in others: type the digits only \\((\\S+) if the dots? separates? thousands\\)$`,
    '$2 ~ $3 사이의 정수여야 합니다 (입력: $4). 숫자 사이의 점은 나라에 따라 천 단위 구분 기호로도 소수점으로도 쓰이니 숫자만 입력하세요 (점이 천 단위 구분이라면 $5)'],
  [`^${FIELD} must be a whole number from ([\\d,-]+) to ([\\d,]+) \\(got (.*)\\)$`, '$2 ~ $3 사이의 정수여야 합니다 (입력: $4)'],
  [`^${FIELD} must be an http or https URL \\(got (".*"), a link to (".*"): type the address itself in the cell\\)$`,
    'http 또는 https로 시작하는 주소여야 합니다 (입력: $2, 링크: $3). 셀에 주소를 직접 입력하세요'],
  [`^${FIELD} must be an http or https URL \\(got (.*)\\)$`, 'http 또는 https로 시작하는 주소여야 합니다 (입력: $2)'],
  [`^duplicate sku, first seen in row (\\d+)$`, '같은 판매자상품코드가 $1행에 이미 있습니다'],
  [`^${FIELD} holds (?:the error )?(.+)$`, '셀에 $2 오류가 있습니다. 수식 대신 값을 입력하세요'],
].map(([pattern, ko]) => [new RegExp(pattern, 's'), ko]);

/**
 * `message` in Korean by the first of `rules` that matches it; as it came when none does.
 * A rule's Korean is a string (`$n`: the n-th group) or a function of the match and `columns`.
 */
function translate(message, rules, columns) {
  for (const [re, ko] of rules) {
    const m = re.exec(message);
    if (!m) continue;
    return typeof ko === 'function' ? ko(m, columns || {}) : ko.replace(/\$(\d)/g, (_, n) => m[Number(n)] ?? '');
  }
  return message;
}

/** The row error's reason in `lang` ('ko' or 'en'). */
export function rowReason(message, lang) {
  return lang === 'ko' ? translate(message, KO_RULES) : message;
}

// A sheet refused as a whole (src/excel/: sniff-file.ts, read-workbook.ts,
// inflate-bound.ts, parse-products.ts, read-csv.ts, and the console's size limit).
// The English names the file as "this file" or "this .pdf file"; the Korean as 이 파일.
const THIS = '^this (?:\\S+ )?file ';
const AGAIN = 'save it as \\.xlsx again and upload the new file\\.$';
const KO_FILE_RULES = [
  [`${THIS}is damaged \\(a part lies outside the file\\): ${AGAIN}`, '이 파일은 손상되었습니다 (파일 밖을 가리키는 부분이 있습니다). .xlsx로 다시 저장해 새 파일을 올려 주세요.'],
  [`${THIS}is damaged \\(a part cannot be unpacked\\): ${AGAIN}`, '이 파일은 손상되었습니다 (풀 수 없는 부분이 있습니다). .xlsx로 다시 저장해 새 파일을 올려 주세요.'],
  [`${THIS}is damaged \\(a part's contents do not match its checksum\\): ${AGAIN}`, '이 파일은 손상되었습니다 (내용이 체크섬과 맞지 않는 부분이 있습니다). .xlsx로 다시 저장해 새 파일을 올려 주세요.'],
  [`${THIS}is damaged or incomplete \\(its zip directory is missing\\): ${AGAIN}`, '이 파일은 손상되었거나 일부가 없습니다 (zip 목록이 없습니다). .xlsx로 다시 저장해 새 파일을 올려 주세요.'],
  [`${THIS}uses a zip compression Excel does not write: save it from Excel as \\.xlsx and upload the new file\\.$`, '이 파일은 엑셀이 쓰지 않는 zip 압축 방식을 씁니다. 엑셀에서 .xlsx로 저장해 새 파일을 올려 주세요.'],
  [`${THIS}expands to more than (\\S+ MiB) when opened, far more than 500 products need: remove images and unused sheets, or split the file\\.$`, '이 파일은 열면 $1 넘게 커져 상품 500개에 필요한 크기보다 훨씬 큽니다. 이미지와 쓰지 않는 시트를 지우거나 파일을 나누세요.'],
  [`${THIS}expands to (\\S+ MiB) when opened, far more than 500 products need: remove images and unused sheets, or split the file\\.$`, '이 파일은 열면 $1로 커져 상품 500개에 필요한 크기보다 훨씬 큽니다. 이미지와 쓰지 않는 시트를 지우거나 파일을 나누세요.'],
  [`${THIS}is a Word document, not a workbook: put the products in an Excel sheet saved as \\.xlsx\\.$`, '이 파일은 엑셀 통합 문서가 아닌 워드 문서입니다. 상품을 엑셀 시트에 넣어 .xlsx로 저장하세요.'],
  [`${THIS}is a PowerPoint file, not a workbook: put the products in an Excel sheet saved as \\.xlsx\\.$`, '이 파일은 엑셀 통합 문서가 아닌 파워포인트 파일입니다. 상품을 엑셀 시트에 넣어 .xlsx로 저장하세요.'],
  [`${THIS}is an OpenDocument spreadsheet \\(\\.ods\\): save it as \\.xlsx\\.$`, '이 파일은 OpenDocument 스프레드시트(.ods)입니다. .xlsx로 저장하세요.'],
  [`${THIS}is a zip archive but not an \\.xlsx workbook: upload the \\.xlsx file itself, not an archive\\.$`, '이 파일은 .xlsx 통합 문서가 아닌 zip 압축 파일입니다. 압축 파일이 아닌 .xlsx 파일을 올려 주세요.'],
  [`${THIS}is a PDF document, not a workbook: upload the sheet saved as \\.xlsx\\.$`, '이 파일은 엑셀 통합 문서가 아닌 PDF 문서입니다. 시트를 .xlsx로 저장해 올려 주세요.'],
  [`${THIS}holds a web page \\(HTML\\), not a workbook: open it in Excel and save it as \\.xlsx\\.$`, '이 파일은 엑셀 통합 문서가 아닌 웹 페이지(HTML)입니다. 엑셀에서 열어 .xlsx로 저장하세요.'],
  [`${THIS}is an Excel 2003 XML spreadsheet: open it in Excel and save it as \\.xlsx\\.$`, '이 파일은 엑셀 2003 XML 스프레드시트입니다. 엑셀에서 열어 .xlsx로 저장하세요.'],
  [`${THIS}holds XML text, not a workbook: save the sheet as \\.xlsx\\.$`, '이 파일은 엑셀 통합 문서가 아닌 XML 텍스트입니다. 시트를 .xlsx로 저장하세요.'],
  [`${THIS}holds CSV text: save it as \\.xlsx or rename it \\.csv\\.$`, '이 파일은 CSV 텍스트입니다. .xlsx로 저장하거나 파일 이름을 .csv로 바꾸세요.'],
  [`${THIS}holds plain text, not a product sheet \\(its first line names none of the columns (.+)\\): upload the sheet saved as \\.xlsx\\.$`, '이 파일은 상품 시트가 아닌 일반 텍스트입니다 (첫 줄에 $1 열이 하나도 없습니다). 시트를 .xlsx로 저장해 올려 주세요.'],
  [`${THIS}holds binary data, not CSV text or a spreadsheet: export the sheet as CSV again or save it as \\.xlsx, and upload the new file\\.$`, '이 파일은 CSV 텍스트도 스프레드시트도 아닌 바이너리 데이터입니다. 시트를 CSV로 다시 내보내거나 .xlsx로 저장해 새 파일을 올려 주세요.'],
  [`${THIS}is not an \\.xlsx workbook \\(its content is not recognised\\): save the sheet as \\.xlsx\\.$`, '이 파일은 .xlsx 통합 문서가 아닙니다 (내용을 알아볼 수 없습니다). 시트를 .xlsx로 저장하세요.'],
  ['^the file is empty: export the sheet as CSV again \\(or save it as \\.xlsx\\) and upload the new file\\.$', '빈 파일입니다. 시트를 CSV로 다시 내보내거나 .xlsx로 저장해 새 파일을 올려 주세요.'],
  ['^the file is empty: save the sheet as \\.xlsx and upload it again\\.$', '빈 파일입니다. 시트를 .xlsx로 저장해 다시 올려 주세요.'],
  ['^the file is ([\\d,]+) bytes, more than the 10 MiB \\(10,485,760 bytes\\) allowed: remove images or split the products into several files\\.$', '파일 크기가 $1바이트로, 최대 10 MiB(10,485,760바이트)를 넘습니다. 이미지를 지우거나 상품을 여러 파일로 나누세요.'],
  ['^the file is ([\\d.]+) MiB; at most 10 MiB is allowed: remove images or split the products into several files\\.$', '파일 크기가 $1 MiB입니다. 최대 10 MiB까지 올릴 수 있으니 이미지를 지우거나 상품을 여러 파일로 나누세요.'],
  ['^the upload is larger than (.+) \\((\\d+) bytes\\): a sheet of 500 products is far smaller; remove images or split the file\\.$', '올린 파일이 $1($2바이트)보다 큽니다. 상품 500개짜리 시트는 훨씬 작으니 이미지를 지우거나 파일을 나누세요.'],
  ['^the workbook is password-protected: remove the password \\(File > Info > Protect Workbook\\) and save it as \\.xlsx again\\.$', '암호로 보호된 통합 문서입니다. 암호를 해제(파일 > 정보 > 통합 문서 보호)하고 .xlsx로 다시 저장하세요.'],
  ['^legacy \\.xls is not supported: save the file as \\.xlsx\\.$', '예전 엑셀 형식(.xls)은 지원하지 않습니다. 파일을 .xlsx로 저장하세요.'],
  ['^the workbook is damaged or incomplete and cannot be read: open it in Excel, save it as \\.xlsx again and upload the new file\\.$', '통합 문서가 손상되었거나 일부가 없어 읽을 수 없습니다. 엑셀에서 열어 .xlsx로 다시 저장한 뒤 새 파일을 올려 주세요.'],
  ['^the workbook has no worksheet: add a sheet named "products" with the header row\\.$', '통합 문서에 워크시트가 없습니다. 머리글 행이 있는 "products" 시트를 추가하세요.'],
  ['^the workbook has no visible worksheet: unhide the products sheet or name it "products"\\.$', '보이는 워크시트가 없습니다. 상품 시트의 숨기기를 해제하거나 시트 이름을 "products"로 바꾸세요.'],
  ['^the (?:file|sheet) has two columns headed (.+) \\(columns ([A-Z]+) and ([A-Z]+)\\): remove one or give it another header, and upload again\\.$', '머리글이 $1인 열이 두 개 있습니다 ($2열, $3열). 하나를 지우거나 머리글을 바꿔 다시 올려 주세요.'],
  ['^the sheet "(.*)" has no (.+) columns? in row 1: add the headers? \\(see the template\\) and upload again\\. Row 1 has merged cells \\((.+)\\): unmerge them so that each column has its own header\\.$',
    '"$1" 시트의 1행에 $2 열이 없습니다. 1행에 병합된 셀($3)이 있으니 병합을 해제해 각 열에 머리글을 넣고, 양식을 참고해 다시 올려 주세요.'],
  ['^the sheet "(.*)" has no (.+) columns? in row 1: add the headers? \\(see the template\\) and upload again\\.$', '"$1" 시트의 1행에 $2 열이 없습니다. 양식을 참고해 머리글을 넣고 다시 올려 주세요.'],
  ['^the (?:file|sheet) has no (.+) columns? in row 1: add the headers? \\(see the template\\) and upload again\\.$', '1행에 $1 열이 없습니다. 양식을 참고해 머리글을 넣고 다시 올려 주세요.'],
  ['^the file has ([\\d,]+) product rows; at most ([\\d,]+) are allowed: split it into several files\\.$', '상품 행이 $1개입니다. 한 파일에 최대 $2개까지 올릴 수 있으니 여러 파일로 나누세요.'],
  ['^no products found: the (?:file|sheet) has a header row but no product rows\\.$', '상품이 없습니다. 머리글 행만 있고 상품 행이 없습니다.'],
  ['^no products found: the (?:file|sheet) holds only the template\'s example \\(rows? ([\\d, ]+), (.+)\\): replace it with your products and upload again\\.$', '상품이 없습니다. 양식의 예시($1행, $2)만 있습니다. 예시를 내 상품으로 바꿔 다시 올려 주세요.'],
  ['^the file has a quoted value starting on line (\\d+) that is never closed: check the quotes on line \\d+ \\(write "" for a quote inside a value\\) and upload again\\.$', '$1번째 줄에서 시작하는 따옴표 값이 닫히지 않았습니다. $1번째 줄의 따옴표를 확인하고(값 안의 따옴표는 ""로 쓰세요) 다시 올려 주세요.'],
  ['^the file has a quoted value starting on line (\\d+) that runs over several lines and has more text after its closing quote: check the quotes on line \\d+ \\(write "" for a quote inside a value\\) and upload again\\.$', '$1번째 줄에서 시작하는 따옴표 값이 여러 줄에 걸쳐 있고 닫는 따옴표 뒤에 글자가 더 있습니다. $1번째 줄의 따옴표를 확인하고(값 안의 따옴표는 ""로 쓰세요) 다시 올려 주세요.'],
].map(([pattern, ko]) => [new RegExp(pattern, 's'), ko]);

// The console API's other refusals a seller's page can meet (src/console/server.ts):
// Redis away or slow, a replica that did not confirm, an internal error, the link, a cancel.
const KO_API_RULES = [
  ['^Redis does not answer: the console can neither read nor change anything until it does; try again in a moment\\.$', '서버(Redis)가 응답하지 않아 지금은 조회도 변경도 할 수 없습니다. 잠시 후 다시 시도하세요.'],
  ['^Redis did not answer within ([\\d.]+) s: the sheet may still be queued once it answers\\. Look at your uploads before sending it again \\(sending the same file again queues nothing twice\\)\\.$',
    '서버(Redis)가 $1초 안에 응답하지 않았습니다. 응답이 돌아오면 시트가 등록 대기열에 들어갈 수 있으니, 다시 보내기 전에 업로드 목록을 확인하세요 (같은 파일을 다시 보내도 두 번 등록되지 않습니다).'],
  ['^the console has ([\\d,]+) sheets waiting to be read before this one could be: nothing of it was queued; send it again in a minute\\.$',
    '콘솔에 먼저 읽을 시트가 $1개 기다리고 있어 이 시트를 받지 못했습니다. 아무것도 등록 대기열에 들어가지 않았으니 1분 뒤에 다시 보내 주세요.'],
  ['^the rows were written to the Redis master, but none of its (\\d+) replica\\(s\\) confirmed them within (\\d+) ms, so a failover now could lose them: check the replica, then upload the file again \\(nothing is enqueued twice\\)\\.$',
    '행을 Redis 마스터에 기록했지만 복제본 $1개 중 어느 것도 $2ms 안에 확인하지 않아, 지금 장애 조치가 일어나면 사라질 수 있습니다. 운영자가 복제본을 확인한 뒤 파일을 다시 올려 주세요 (두 번 등록되지 않습니다).'],
  ['^the console could not answer \\(an internal error was logged\\): try again in a moment\\.$', '콘솔이 응답하지 못했습니다 (내부 오류가 기록되었습니다). 잠시 후 다시 시도하세요.'],
  ['^seller links are off on this console \\(CONSOLE_SECRET is not set\\): ask the operator\\.$', '이 콘솔에서는 판매자 링크를 쓸 수 없습니다 (CONSOLE_SECRET 미설정). 운영자에게 문의하세요.'],
  ['^this seller link has expired: ask the operator for a new one\\.$', '판매자 링크가 만료되었습니다. 운영자에게 새 링크를 요청하세요.'],
  ['^this seller link is not valid: ask the operator for a new one\\.$', '유효하지 않은 판매자 링크입니다. 운영자에게 새 링크를 요청하세요.'],
  ['^a seller may cancel only its own uploads\\.$', '판매자는 자신의 업로드만 취소할 수 있습니다.'],
  ['^no upload (".*") is known: check the id\\.$', '업로드 $1을(를) 찾을 수 없습니다. ID를 확인하세요.'],
].map(([pattern, ko]) => [new RegExp(pattern, 's'), ko]);

const KO_ERROR_RULES = [...KO_FILE_RULES, ...KO_API_RULES];

/** A refusal (the API's `error`: of the whole file, or of a request) in `lang` ('ko' or 'en'); anything else as it came. */
export function errorReason(message, lang) {
  return lang === 'ko' ? translate(message, KO_ERROR_RULES) : message;
}

// The sheet reader's warnings (src/excel/: parse-products.ts, sniff-file.ts): the rows
// that were read anyway, shown with the upload's summary.
const KO_WARNING_RULES = [
  ['^column (".*") repeats the (\\S+) column; only the first one is read\\.$', (m, columns) => `${m[1]} 열은 ${columns[m[2]] || m[2]} 열과 겹칩니다. 첫 번째 열만 읽었습니다.`],
  ['^column ([A-Z]+) has no header in row 1, so its values \\(rows? ([\\d, ]+?)(?: and (\\d+) more)?\\) were not read: give it a header to send them to the marketplace, or clear it\\.$',
    (m) => `${m[1]}열의 1행에 머리글이 없어 그 값(${m[2]}행${m[3] ? ` 외 ${m[3]}개` : ''})을 읽지 않았습니다. 마켓에 보내려면 머리글을 넣고, 아니면 값을 지우세요.`],
  ['^rows? ([\\d, ]+) (?:is|are) the template\'s example \\((.+)\\): not registered\\.$', '$1행은 양식의 예시($2)라 등록하지 않습니다.'],
  ['^columns? (.+) (?:is|are) kept in the reports but not sent: the built-in adapter sends only the fields of the template \\((.+)\\); set REGISTRATION_ADAPTER to send (?:them|it)\\.$',
    (m, columns) => `${m[1]} 열은 결과 파일에는 남지만 마켓에 보내지 않습니다. 기본 어댑터는 양식의 항목(${m[2].split(', ').map((f) => columns[f] || f).join(', ')})만 보내며, 보내려면 운영자가 REGISTRATION_ADAPTER를 설정해야 합니다.`],
  [`${THIS}holds an \\.xlsx workbook; it was read as \\.xlsx\\.$`, '이 파일은 .xlsx 통합 문서라서 .xlsx로 읽었습니다.'],
  ['^cells ([A-Z]+\\d+:[A-Z]+\\d+(?:, [A-Z]+\\d+:[A-Z]+\\d+)*)(?: and (\\d+) more)? are merged: the value in (?:([A-Z]+\\d+)|each range\'s top cell) was used for every product row (?:they span|it spans)\\.$',
    (m) => `${m[1]}${m[2] ? ` 외 ${m[2]}개` : ''} 셀이 병합되어 있어, ${m[3] ? `${m[3]} 셀` : '각 범위 맨 위 셀'}의 값을 그 범위에 걸친 모든 상품 행에 사용했습니다.`],
].map(([pattern, ko]) => [new RegExp(pattern, 's'), ko]);

/**
 * A warning of the sheet reader in `lang` ('ko' or 'en'); anything else as it came.
 * `columns`: the page's header for each field (sku -> 판매자상품코드), to name a field the Korean way.
 */
export function warningReason(message, lang, columns) {
  return lang === 'ko' ? translate(message, KO_WARNING_RULES, columns) : message;
}
