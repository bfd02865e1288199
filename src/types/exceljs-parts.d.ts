/**
 * Two of exceljs's own modules, imported one by one where the whole library
 * is not needed (src/excel/read-workbook.ts): their types are those of the
 * package's root export.
 */
declare module 'exceljs/lib/stream/xlsx/workbook-reader.js' {
  const WorkbookReader: typeof import('exceljs').stream.xlsx.WorkbookReader;
  export default WorkbookReader;
}

declare module 'exceljs/lib/doc/enums.js' {
  const enums: { ValueType: typeof import('exceljs').ValueType };
  export default enums;
}
