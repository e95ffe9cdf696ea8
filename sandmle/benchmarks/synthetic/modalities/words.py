"""An offline word list for text tasks: common English nouns (written for this package)."""

WORDS: tuple[str, ...] = tuple(
    """
    account action advice afternoon agent air alarm angle animal answer apple area arm
    army arrival art attack aunt autumn baby back bag balance ball band bank bar basket
    bath battery beach bean bear bed bee bell belt bench bicycle bird birth blade blanket
    block blood board boat body bone book boot border bottle bottom box brain branch bread
    breath brick bridge brother brush bucket budget building bulb bus butter button cabin
    cable cake camera camp candle canvas car card carpet cart castle cat cattle ceiling
    cell chain chair chalk chance channel chapter cheese chest chicken child chimney church
    circle city class clock cloth cloud coal coast coat coffee coin collar colour comb
    comfort committee company copper cord corn cotton country court cover cow crack cradle
    crayon cream credit crime crowd crown cup curtain cushion dance danger daughter day
    debt decision deck degree desk detail dinner dirt discovery disease dish distance
    doctor dog door drain drawer dream dress drink driver drop dust ear earth edge egg
    elbow engine error evening event example exchange expert eye face fact factory family
    farm father feather fence field fight figure finger fire fish flag flame flight floor
    flower fog fold food foot force fork form fountain frame friend frog front fruit fuel
    garden gate gift glass glove goat gold grain grass group guard guide gun hair hammer
    hand harbor hat head heart heat hill hole honey hook horn horse hospital hour house
    ice idea ink insect iron island jacket jam jar jelly jewel journey judge juice kettle
    key kitten knee knife knot label ladder lake lamp land language lead leaf leather
    letter level library light limit line linen lip liquid list loaf lock lunch machine
    magic map market mask match meal meat medicine memory metal milk mind mine minute
    mirror money monkey month moon morning mother motion mountain mouth muscle music nail
    name nation needle nest net news night noise nose note number nut oak ocean office
    oil orange oven owner page pail paint pan paper parcel park pass paste path peace
    pear pen pencil pepper picture pie pig pin pipe pitch plane plant plate pocket poem
    point pole pot potato powder price prison profit pump puzzle queen question rabbit
    rail rain range rat receipt record river road rock roof room root rope rose route
    rubber rule salt sand scale school science screw sea season seat seed shade shadow
    sheep shelf shell ship shirt shoe shop side sign silk silver sink sister skin skirt
    sky sleep slope smoke snake snow soap sock soda sofa soil song sound soup space spade
    spark sponge spoon spring square stage stair stamp star station steam steel stem step
    stick stitch stone store storm story stove straw stream street string sugar summer
    sun supper swing table tail tax tea teeth tent test thread throat thumb ticket tiger
    time tin toe tongue tool tooth town toy track trade train tray tree trick truck tub
    tube turkey twig umbrella uncle valley van vase veil verse vessel view village voice
    wagon wall war watch water wave wax weather week wheel whip whistle wind window wine
    wing winter wire wood wool word worm wound wrist yard yarn year zinc zone
    """.split()
)
