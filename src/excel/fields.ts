/** The sheet's fields, their header aliases and limits (excel-format.md). */
export const FIELDS = ['sku', 'name', 'price', 'stock', 'category', 'brand', 'description', 'imageUrl'] as const;
export type Field = (typeof FIELDS)[number];

export const REQUIRED: readonly Field[] = ['sku', 'name', 'price', 'stock', 'category'];

export const ALIASES: Record<Field, readonly string[]> = {
  sku: ['sku', '판매자상품코드', '상품코드', 'seller sku'],
  name: ['name', '상품명', 'product name'],
  price: ['price', '판매가', 'sale price'],
  stock: ['stock', '재고수량', '재고', 'quantity'],
  category: ['category', '카테고리코드', '카테고리', 'category code'],
  brand: ['brand', '브랜드'],
  description: ['description', '상품설명', '상세설명'],
  imageUrl: ['imageUrl', '대표이미지', '이미지url', 'image url'],
};

/**
 * Header text compared ignoring case, surrounding and inner spaces, `_` and `-`,
 * characters that show nothing (zero-width spaces and joiners, a stray BOM) and
 * full-width forms (`ｐｒｉｃｅ` is `price`, NFKC): a header that looks right in
 * Excel is taken as what it looks like.
 */
export function normalizeHeader(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/[\u200b-\u200d\u2060\ufeff]/g, '').replace(/[\s_-]+/g, '');
}

const BY_ALIAS = new Map<string, Field>(
  FIELDS.flatMap((field) => ALIASES[field].map((alias) => [normalizeHeader(alias), field] as const)),
);

export function fieldForHeader(text: string): Field | undefined {
  return BY_ALIAS.get(normalizeHeader(text));
}

/**
 * The column the failed-only file adds after the seller's columns
 * (report/upload-report.ts). It is ours, not the marketplace's: an upload
 * skips it, so that the file goes back as it is once fixed.
 */
export const REASON_HEADER = 'reason (ignored on upload)';

/** True for a header the reports add (matched as a field's header is). */
export function isReportColumn(text: string): boolean {
  return normalizeHeader(text) === normalizeHeader(REASON_HEADER);
}

export const TEXT_LIMITS: Partial<Record<Field, { min: number; max: number }>> = {
  sku: { min: 1, max: 50 },
  name: { min: 1, max: 100 },
  category: { min: 1, max: 20 },
  brand: { min: 0, max: 50 },
  description: { min: 0, max: 5000 },
};

export const WHOLE_LIMITS: Partial<Record<Field, { min: number; max: number }>> = {
  price: { min: 1, max: 1_000_000_000 },
  stock: { min: 0, max: 99_999 },
};

export const MAX_PRODUCT_ROWS = 500;

/** The body of one registration request (registration-api.md); optional fields absent when empty. */
export interface Product {
  sku: string;
  name: string;
  price: number;
  stock: number;
  category: string;
  brand?: string;
  description?: string;
  imageUrl?: string;
}

/**
 * The example row the template ships with (src/report/template.ts). A sheet
 * that still holds it is read without it: its image is on example.com, a
 * domain reserved for examples, so no seller's real product matches it.
 */
export const TEMPLATE_EXAMPLE: Product = {
  sku: 'SKU-0001', name: 'Ceramic mug 350ml', price: 12000, stock: 30, category: 'C0101',
  brand: 'Acme', description: 'Dishwasher safe.', imageUrl: 'https://img.example.com/mug.jpg',
};

/** The template's example row, left in: the same SKU, name and image. */
export function isTemplateExample(product: Partial<Product>): boolean {
  return product.sku === TEMPLATE_EXAMPLE.sku && product.name === TEMPLATE_EXAMPLE.name && product.imageUrl === TEMPLATE_EXAMPLE.imageUrl;
}
