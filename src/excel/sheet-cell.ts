/** A cell as the rules see it, whatever the file format it came from. */
export type SheetCell =
  | { kind: 'empty' }
  /** `link`: the target of a hyperlink on the cell, where the cell shows text of its own (kept for messages). */
  | { kind: 'text'; text: string; link?: string }
  /** `shown`: the text the cell shows, where its format pads the number with zeros ("00000" shows 12 as 00012). */
  | { kind: 'number'; value: number; shown?: string }
  | { kind: 'bool'; value: boolean }
  | { kind: 'date'; value: Date }
  /** `text` completes "name holds ..."; `code` is the error value the cell shows (#REF!), when known. */
  | { kind: 'error'; text: string; code?: string };

export const EMPTY: SheetCell = { kind: 'empty' };

/** One sheet row: its spreadsheet row number (header = 1) and cells by 0-based column. */
export interface SheetRow {
  row: number;
  cells: SheetCell[];
}

/** A range of merged cells: rows as the spreadsheet numbers them (header = 1), columns 0-based. */
export interface MergedRange {
  top: number;
  left: number;
  bottom: number;
  right: number;
}

export interface SheetData {
  /** The worksheet's name; absent for a CSV file, which is its own one sheet. */
  sheetName?: string;
  /**
   * The sheet's merged cells. A spreadsheet keeps a merged range's value in its
   * top-left cell only; the others read as empty.
   */
  merged?: MergedRange[];
  header: SheetCell[];
  /** Non-empty rows after the header, in order; reading stops after `stopAfter` + 1 of them. */
  rows: SheetRow[];
  /** Set when reading stopped early: the sheet has more than rows.length - 1 product rows. */
  overLimit: boolean;
}

export function isEmptyCell(cell: SheetCell | undefined): boolean {
  return cell === undefined || cell.kind === 'empty' || (cell.kind === 'text' && cell.text.trim() === '');
}
