"""The allow-list of ``jobs.sql``: what a read-only lake query may resolve to.

Class names are relative to ``org.apache.spark.sql.catalyst.`` (``expressions.Abs`` is
``org.apache.spark.sql.catalyst.expressions.Abs``); a name ending in ``$`` is a Scala object.

* ``FUNCTIONS`` -- the classes Spark's function registry names (``ExpressionInfo.getClassName``)
  for the built-in functions a query may call: an expression class, or the builder that
  makes one (``CeilExpressionBuilder``). A function is callable when its registry class is here.
* ``EXPRESSIONS`` -- the other expression classes an analysed query holds: what the builders
  and query syntax resolve to (``Alias``, ``SortOrder``, window frames, subqueries, lambdas,
  ``Ceil``/``RoundCeil``, ...).
* ``UNRESOLVED`` -- the parser's placeholders, allowed in the parsed plan only.
* ``QUERY_NODES`` / ``ANALYZED_NODES`` -- the logical plan operators of a query, parsed
  and analysed.

Everything else is refused. Not here on purpose: ``reflect``, ``java_method`` and
``try_reflect`` (``CallMethodViaReflection``, ``TryReflect``: any static Java method);
``from_protobuf``/``to_protobuf`` (read a descriptor file named by an argument, during
analysis); ``from_avro``/``to_avro``/``schema_of_avro`` (connector functions);
``from_xml``/``schema_of_xml`` (their ``rowValidationXSDPath`` option reads a file);
``measure`` (metric views); the TIME-type functions (``make_time``, ``time_diff``,
``to_time``, ``time_trunc``, ... -- the TIME type is off in this Spark, so they could not be
checked); and every UDF (``ScalaUDF``, ``PythonUDF``, ...), ``StaticInvoke``/``Invoke`` and
any class a new Spark version adds. ``tests/integration/spark/test_sql_registry.py``
resolves the example queries of every registry function and fails when an allowed one
reaches reflection, a UDF or a non-Spark method.
"""

from __future__ import annotations


def _in(package: str, names: str) -> frozenset[str]:
    return frozenset(f"{package}.{name}" for name in names.split())


FUNCTIONS = (
    _in("expressions", """
    Abs Acos Acosh Add AddMonths AesDecrypt AesEncrypt And ApproxTopKEstimate ArrayAggregate ArrayAppend
    ArrayCompact ArrayContains ArrayDistinct ArrayExcept ArrayExists ArrayFilter ArrayForAll ArrayInsert
    ArrayIntersect ArrayJoin ArrayMax ArrayMin ArrayPosition ArrayPrepend ArrayRemove ArrayRepeat ArraySize
    ArraySort ArrayTransform ArrayUnion ArraysOverlap ArraysZip Ascii Asin Asinh AssertTrue Atan Atan2 Atanh
    BRound Base64 Between Bin BitLength BitmapAndAgg BitmapBitPosition BitmapBucketNumber BitmapConstructAgg
    BitmapCount BitmapOrAgg BitwiseAnd BitwiseCount BitwiseGet BitwiseNot BitwiseOr BitwiseXor CaseWhen Cast
    Cbrt CeilExpressionBuilder Chr Coalesce CollateExpressionBuilder Collation Concat ConcatWs
    ContainsExpressionBuilder Conv ConvertTimezone Cos Cosh Cot Crc32 CreateArray CreateMap
    CreateNamedStruct Csc CsvToStructs CumeDist CurDateExpressionBuilder CurrentCatalog CurrentDatabase
    CurrentDate CurrentPath CurrentTime CurrentTimeZone CurrentTimestamp CurrentUser DateAdd DateDiff
    DateFormatClass DateFromUnixDate DatePartExpressionBuilder DateSub DayName DayOfMonth DayOfWeek
    DayOfYear Decode DenseRank Divide ElementAt Elt Encode EndsWithExpressionBuilder EqualNull EqualNullSafe
    EqualTo EulerNumber Exp ExplodeExpressionBuilder Expm1 Extract Factorial FindInSet Flatten
    FloorExpressionBuilder FormatNumber FormatString FromUTCTimestamp FromUnixTime Get GetJsonObject
    GreaterThan GreaterThanOrEqual Greatest Grouping GroupingID Hex HllSketchEstimate HllUnion
    HourExpressionBuilder Hypot ILike If In InitCap InlineExpressionBuilder InputFileBlockLength
    InputFileBlockStart InputFileName IntegralDivide IsNaN IsNotNull IsNull IsValidUTF8 JsonObjectKeys
    JsonToStructs JsonTuple KllSketchGetNBigint KllSketchGetNDouble KllSketchGetNFloat
    KllSketchGetQuantileBigint KllSketchGetQuantileDouble KllSketchGetQuantileFloat KllSketchGetRankBigint
    KllSketchGetRankDouble KllSketchGetRankFloat KllSketchMergeBigint KllSketchMergeDouble
    KllSketchMergeFloat KllSketchToStringBigint KllSketchToStringDouble KllSketchToStringFloat
    LPadExpressionBuilder Lag LastDay Lead Least Left Length LengthOfJsonArray LessThan LessThanOrEqual
    Levenshtein Like LocalTimestamp Log Log10 Log1p Log2 Logarithm Lower Luhncheck MakeDTInterval MakeDate
    MakeInterval MakeTimestampExpressionBuilder MakeTimestampLTZExpressionBuilder
    MakeTimestampNTZExpressionBuilder MakeValidUTF8 MakeYMInterval MapConcat MapContainsKey MapEntries
    MapFilter MapFromArrays MapFromEntries MapKeys MapValues MapZipWith MaskExpressionBuilder Md5
    MicrosToTimestamp MillisToTimestamp MinuteExpressionBuilder MonotonicallyIncreasingID Month MonthName
    MonthsBetween Multiply Murmur3Hash NTile NaNvl NextDay Not Now NthValue NullIf NullIfZero Nvl Nvl2
    OctetLength Or Overlay ParseToDate ParseToTimestamp ParseToTimestampLTZExpressionBuilder
    ParseToTimestampNTZExpressionBuilder ParseUrl PercentRank Pi Pmod PosExplodeExpressionBuilder Pow
    Quarter Quote RLike RPadExpressionBuilder RaiseErrorExpressionBuilder Rand RandStr Randn Rank
    RegExpCount RegExpExtract RegExpExtractAll RegExpInStr RegExpReplace RegExpSubStr Remainder Reverse
    Right Rint Round RowNumber SchemaOfCsv SchemaOfJson Sec SecondExpressionBuilder SecondsToTimestamp
    Sentences Sequence SessionWindow Sha1 Sha2 ShiftLeft ShiftRight ShiftRightUnsigned Shuffle Signum Sin
    Sinh Size Slice SortArray SoundEx SparkPartitionID SparkVersion SplitPart Sqrt Stack
    StartsWithExpressionBuilder StringInstr StringLocate StringRepeat StringReplace StringSpace StringSplit
    StringToMap StringTranslate StringTrim StringTrimBoth StringTrimLeft StringTrimRight StructsToCsv
    StructsToJson StructsToXml Substring SubstringIndex Subtract Tan Tanh ThetaDifference ThetaIntersection
    ThetaSketchEstimate ThetaUnion TimeBucketExpressionBuilder TimeWindow ToBinary ToCharacterBuilder
    ToDegrees ToNumber ToRadians ToUTCTimestamp ToUnixTimestamp TransformKeys TransformValues TruncDate
    TruncTimestamp TryAdd TryAesDecrypt TryDivide TryElementAt TryMakeInterval
    TryMakeTimestampExpressionBuilder TryMakeTimestampLTZExpressionBuilder
    TryMakeTimestampNTZExpressionBuilder TryMod TryMultiply TryParseUrl TrySubtract TryToBinary
    TryToDateExpressionBuilder TryToNumber TryToTimestampExpressionBuilder TryUrlDecode TryValidateUTF8
    TupleDifferenceDouble TupleDifferenceInteger TupleDifferenceThetaDouble TupleDifferenceThetaInteger
    TupleIntersectionDouble TupleIntersectionInteger TupleIntersectionThetaDouble
    TupleIntersectionThetaInteger TupleSketchEstimateDouble TupleSketchEstimateInteger
    TupleSketchSummaryDouble TupleSketchSummaryInteger TupleSketchThetaDouble TupleSketchThetaInteger
    TupleUnionDoubleExpressionBuilder TupleUnionIntegerExpressionBuilder
    TupleUnionThetaDoubleExpressionBuilder TupleUnionThetaIntegerExpressionBuilder TypeOf UnBase64
    UnaryMinus UnaryPositive Unhex Uniform UnixDate UnixMicros UnixMillis UnixSeconds UnixTimestamp Upper
    UrlDecode UrlEncode Uuid ValidateUTF8 VectorAvg VectorCosineSimilarity VectorInnerProduct
    VectorL2Distance VectorNorm VectorNormalize VectorSum WeekDay WeekOfYear WidthBucket WindowTime XxHash64
    Year ZeroIfNull ZipWith
""")
    | _in("expressions.aggregate", """
    AnyValue ApproxTopK ApproxTopKAccumulate ApproxTopKCombine ApproximatePercentile Average BitAndAgg
    BitOrAgg BitXorAgg BoolAnd BoolOr CollectList CollectSet Corr Count CountIf
    CountMinSketchAggExpressionBuilder CovPopulation CovSample First HistogramNumeric HllSketchAgg
    HllUnionAgg HyperLogLogPlusPlus KllMergeAggBigint KllMergeAggDouble KllMergeAggFloat KllSketchAggBigint
    KllSketchAggDouble KllSketchAggFloat Kurtosis Last ListAgg Max MaxByBuilder Median Min MinByBuilder
    ModeBuilder Percentile PercentileContBuilder PercentileDiscBuilder RegrAvgX RegrAvgY RegrCount
    RegrIntercept RegrR2 RegrSXX RegrSXY RegrSYY RegrSlope Skewness StddevPop StddevSamp Sum
    ThetaIntersectionAgg ThetaSketchAgg ThetaUnionAgg TryAverageExpressionBuilder TrySumExpressionBuilder
    TupleIntersectionAggDouble TupleIntersectionAggInteger TupleSketchAggDoubleExpressionBuilder
    TupleSketchAggIntegerExpressionBuilder TupleUnionAggDoubleExpressionBuilder
    TupleUnionAggIntegerExpressionBuilder VariancePop VarianceSamp
""")
    | _in("expressions.st", """
    ST_AsBinary ST_GeogFromWKB ST_GeomFromWKB ST_SetSrid ST_Srid
""")
    | _in("expressions.variant", """
    IsValidVariant IsVariantNull ParseJsonExpressionBuilder SchemaOfVariant SchemaOfVariantAgg
    ToVariantObject TryParseJsonExpressionBuilder TryVariantGetExpressionBuilder VariantGetExpressionBuilder
""")
    | _in("expressions.xml", """
    XPathBoolean XPathDouble XPathFloat XPathInt XPathList XPathLong XPathShort XPathString
""")
)

EXPRESSIONS = (
    _in("expressions", """
    Alias AttributeReference BinaryPad BinaryPredicate Ceil Collate CommonExpressionDef CommonExpressionRef
    Contains CurrentRow$ DateAddYMInterval DatetimeSub DivideDTInterval DivideYMInterval EndsWith Exists
    Explode ExtractANSIIntervalDays ExtractANSIIntervalMinutes ExtractANSIIntervalMonths
    ExtractANSIIntervalSeconds Floor GetArrayItem GetArrayStructFields GetMapValue GetStructField Hour
    InSubquery Inline KnownNullable LambdaFunction LateralSubquery LikeAll LikeAny ListQuery Literal
    MakeTimestamp MakeTimestampFromDateTime MakeTimestampNTZ Mask Minute MultiplyDTInterval
    MultiplyYMInterval NamedLambdaVariable NotLikeAll NotLikeAny OuterReference PosExplode
    PreciseTimestampConversion RaiseError ResolvedCollation RoundCeil RoundFloor ScalarSubquery Second
    SecondWithFraction SortOrder SpecifiedWindowFrame StartsWith StringDecode StringLPad StringRPad
    SubtractDates SubtractTimestamps TimeBucket TimestampAdd TimestampAddInterval TimestampAddYMInterval
    TimestampDiff ToCharacter TryEval TryMakeTimestamp TryMakeTimestampFromDateTime TupleUnionDouble
    TupleUnionInteger TupleUnionThetaDouble TupleUnionThetaInteger TypedNullLiteral UnboundedFollowing$
    UnboundedPreceding$ WindowExpression WindowSpecDefinition With
""")
    | _in("expressions.aggregate", """
    AggregateExpression CountMinSketchAgg MaxBy MaxMinByK MinBy Mode PercentileCont PercentileDisc
    PivotFirst TupleSketchAggDouble TupleSketchAggInteger TupleUnionAggDouble TupleUnionAggInteger
""")
    | _in("expressions.variant", """
    ParseJson VariantGet
""")
)


# the parser's placeholders for what analysis resolves (parsed plans only)
UNRESOLVED = _in("analysis", """
    MultiAlias UnresolvedAlias UnresolvedAttribute UnresolvedExtractValue UnresolvedFunction UnresolvedGenerator
    UnresolvedOrdinal UnresolvedRegex UnresolvedSeed UnresolvedStar UnresolvedStarExceptOrReplace
    UnresolvedWithinGroup
""") | _in("expressions", """
    Cube GroupingSets IsNotUnknown$$anon$2 IsUnknown$$anon$1 NamePlaceholder$ NamedArgumentExpression
    PipeExpression Rollup UnresolvedCollation UnresolvedNamedLambdaVariable UnresolvedWindowExpression
    UnspecifiedFrame$
""")

# logical plan operators of a query, as the parser returns them
QUERY_NODES = _in("plans.logical", """
    Project Filter Aggregate Sort GlobalLimit LocalLimit Limit Offset Tail Distinct Deduplicate Union
    Intersect Except Join LateralJoin SubqueryAlias UnresolvedWith CTERelationRef OneRowRelation
    LocalRelation Window WithWindowDefinition Generate Expand Pivot Unpivot Sample RepartitionByExpression
    Repartition UnresolvedHint LimitAll
""") | _in("analysis", """
    UnresolvedRelation UnresolvedInlineTable UnresolvedHaving UnresolvedSubqueryColumnAliases UnresolvedQualify
""") | _in("expressions", "PipeOperator")

# logical plan operators of a query once analysed (a registered view is a ``View``: checked apart)
ANALYZED_NODES = _in("plans.logical", """
    Project Filter Aggregate Sort GlobalLimit LocalLimit Offset Tail Distinct Deduplicate Union Intersect
    Except Join LateralJoin SubqueryAlias WithCTE CTERelationDef CTERelationRef OneRowRelation LocalRelation
    Window Generate Expand Sample RepartitionByExpression Repartition RebalancePartitions ResolvedHint
""") | _in("expressions", "PipeOperator")
