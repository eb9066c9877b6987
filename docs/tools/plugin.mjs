/**
 * TypeDoc plugin for plinth's reference: three rules for types that come from
 * zod schemas, which TypeDoc would otherwise spell out field by field wherever
 * they are used (a `manifest: Manifest` property showed the manifest's 30
 * fields, inline, on every interface that has one).
 *
 * 1. A type written in the source (a property's, parameter's or return type's
 *    annotation) is converted from what was written, so `Manifest` stays a link
 *    to `Manifest`. TypeDoc converts these from the checker's type, and an
 *    alias of `z.infer<…>` resolves to an anonymous object that has lost its
 *    name. Annotations that mention a type parameter keep TypeDoc's way (the
 *    checker's type then has the parameter substituted).
 * 2. A type alias written as `z.infer<typeof schema>` (or `z.input`, `z.output`)
 *    is shown as the object it resolves to, with the fields' own doc comments,
 *    as if tagged `@useDeclaredType`: `output<typeof extensionSchema>` says
 *    nothing to a reader, and names a schema that is not exported.
 * 3. An exported schema value (a variable whose type is one of zod's) is shown
 *    as its zod class without type arguments (`ZodObject`): the arguments are
 *    zod's internal spelling of the shape, which the alias of rule 2 documents.
 */
import ts from 'typescript';
import { Comment, Converter, ReflectionKind } from 'typedoc';

const ZOD_INFER = /^z\.(?:infer|input|output)</;

/** Does this type node refer to a type parameter anywhere inside it? */
function mentionsTypeParameter(checker, node) {
  let found = false;
  const visit = (child) => {
    if (found) return;
    if (ts.isTypeReferenceNode(child)) {
      const symbol = checker.getSymbolAtLocation(child.typeName);
      if (symbol && symbol.flags & ts.SymbolFlags.TypeParameter) {
        found = true;
        return;
      }
    }
    if (ts.isThisTypeNode(child)) {
      found = true;
      return;
    }
    ts.forEachChild(child, visit);
  };
  visit(node);
  return found;
}

/** Is this type declared by the zod package? */
function isZodType(type) {
  const symbol = type.aliasSymbol ?? type.getSymbol();
  const file = symbol?.declarations?.[0]?.getSourceFile().fileName ?? '';
  return /[\\/]node_modules[\\/]zod[\\/]/.test(file);
}

/** @param {import('typedoc').Application} app */
export function load(app) {
  const converter = app.converter;
  const convertType = converter.convertType.bind(converter);

  converter.convertType = (context, typeOrNode, maybeNode) => {
    const isType = typeOrNode !== undefined && !('kind' in typeOrNode);
    // Rule 3: an exported zod schema value.
    if (isType && context.scope.kindOf(ReflectionKind.Variable) && isZodType(typeOrNode)) {
      const symbol = typeOrNode.aliasSymbol ?? typeOrNode.getSymbol();
      return context.createSymbolReference(symbol, context, symbol.name);
    }
    // Rule 1: what the source wrote.
    if (isType && maybeNode !== undefined && !mentionsTypeParameter(context.checker, maybeNode)) {
      return convertType(context, maybeNode);
    }
    return convertType(context, typeOrNode, maybeNode);
  };

  // Rule 2: fires before the alias's type is converted, after its comment is read.
  converter.on(Converter.EVENT_CREATE_DECLARATION, (context, reflection) => {
    if (!reflection.kindOf(ReflectionKind.TypeAlias)) return;
    const symbol = context.getSymbolFromReflection(reflection);
    const declaration = symbol?.getDeclarations()?.find(ts.isTypeAliasDeclaration);
    if (declaration === undefined || !ZOD_INFER.test(declaration.type.getText())) return;
    reflection.comment ??= new Comment();
    reflection.comment.modifierTags.add('@useDeclaredType');
  });
}
