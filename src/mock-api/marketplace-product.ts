/**
 * The marketplace stand-in's product body (POST /v2/products), pure: its own
 * field names and limits, so that an adapter has real translating to do. The
 * limits match excel-format.md, so a row the sheet accepts is accepted here
 * unless its category is one the marketplace lacks.
 */

export interface ProductProblem {
  message: string;
  /** The marketplace's field name, or `extras.<key>`, or `body`. */
  field: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The first thing wrong with `body`, or undefined when it is a product the marketplace takes. */
export function marketplaceProductProblem(body: unknown, invalidCategories: ReadonlySet<string> = new Set()): ProductProblem | undefined {
  if (!isObject(body)) return { message: 'the body must be one JSON product', field: 'body' };
  const text = (f: string, min: number, max: number): ProductProblem | undefined => {
    const v = body[f];
    if (v === undefined && min === 0) return undefined;
    if (typeof v !== 'string' || [...v].length < min || [...v].length > max) return { message: `${f} must be text of ${min}-${max} characters`, field: f };
    return undefined;
  };
  const whole = (f: string, min: number, max: number): ProductProblem | undefined => {
    const v = body[f];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) return { message: `${f} must be a whole number from ${min} to ${max}`, field: f };
    return undefined;
  };
  const problem =
    text('sellerProductCode', 1, 50) ?? text('productName', 1, 100) ?? whole('salePrice', 1, 1_000_000_000) ??
    whole('stockQuantity', 0, 99_999) ?? text('categoryId', 1, 20) ?? text('brandName', 0, 50) ?? text('detailHtml', 0, 5000);
  if (problem) return problem;
  if (body.mainImageUrl !== undefined && (typeof body.mainImageUrl !== 'string' || !/^https?:\/\/\S+$/.test(body.mainImageUrl))) {
    return { message: 'mainImageUrl must be an http or https URL', field: 'mainImageUrl' };
  }
  if (body.extras !== undefined) {
    if (!isObject(body.extras)) return { message: 'extras must be an object of text values', field: 'extras' };
    for (const [k, v] of Object.entries(body.extras)) {
      if (typeof v !== 'string' || [...v].length > 1000) return { message: `extras.${k} must be text of at most 1000 characters`, field: `extras.${k}` };
    }
  }
  if (invalidCategories.has(String(body.categoryId))) return { message: `category ${String(body.categoryId)} does not exist`, field: 'categoryId' };
  return undefined;
}
