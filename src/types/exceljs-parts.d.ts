/**
 * Three of exceljs's own modules, imported one by one where the whole library
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

/** The two helpers by which the stream reader reads a number in a date-formatted cell as a date. */
declare module 'exceljs/lib/utils/utils.js' {
  const utils: {
    isDateFmt(format: string | undefined): boolean;
    excelToDate(serial: number, date1904?: boolean): Date;
  };
  export default utils;
}
