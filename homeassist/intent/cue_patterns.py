"""The vocabulary of request routing: one regular expression per idea, by the kind it points to.

Each pattern is one idea ("a timer word", "a device noun", "a question about the weather"), written
by hand from the vocabulary and phrasing of its domain, never from sentences of an evaluation set.
``router.CUES`` gives each its name, kind and weight. Patterns match normalised text (lower case,
numbers as digits).
"""

from __future__ import annotations

from homeassist.vocabulary import TYPE_NOUN_PATTERNS


def _either(first: str, second: str) -> str:
    """Both ideas, as whole words, in either order."""
    return rf"(?:\b(?:{first})\b.*\b(?:{second})\b|\b(?:{second})\b.*\b(?:{first})\b)"


def _words(*alternatives: str) -> str:
    """A regex alternation of phrases, each matched as whole words (and an optional plural -s)."""
    return r"\b(?:" + "|".join(alternatives) + r")s?\b"


#: The device types' own nouns (``vocabulary.TYPE_NOUNS``), then the other things a home request names.
_DEVICE_NOUNS = (
    *TYPE_NOUN_PATTERNS,
    r"chandelier",
    r"led strip",
    r"leds",
    r"ceiling fan",
    r"radiators?",
    r"furnace",
    r"boiler",
    r"hvac",
    r"a ?c",
    r"air ?con(?:ditioner|ditioning)?",
    r"garage(?: door)?",
    r"gates?",
    r"doors?",
    r"deadbolt",
    r"windows?",
    r"skylight",
    r"valves?",
    r"sprinklers?",
    r"irrigation",
    r"vacuum(?: cleaner)?",
    r"robot vacuum",
    r"roomba",
    r"roborock",
    r"hoover",
    r"(?:lawn ?)?mower",
    r"tv",
    r"television",
    r"speakers?",
    r"coffee (?:maker|machine)",
    r"kettle",
    r"oven",
    r"stove",
    r"dishwasher",
    r"washer",
    r"washing machine",
    r"dryer",
    r"fridge",
    r"refrigerator",
    r"freezer",
    r"humidifier",
    r"dehumidifier",
    r"purifier",
    r"detectors?",
    r"cameras?",
    r"doorbell",
    r"chime",
    r"siren",
    r"scene",
    r"(?:guest|away|night|eco|vacation|party|sleep|home) mode",
    r"media player",
    r"shower",
    r"charging station",
    r"dock",
    r"scripts?",
    r"routines?",
    r"automations?",
    r"coffee",
    r"brightness",
    r"dimmer",
    r"devices?",
    r"appliances?",
    r"hue",
    r"wemo",
    r"smart plug",
    r"socket",
    r"pump",
    r"water heater",
    r"fireplace",
    r"alarm system",
    r"security system",
)
DEVICE_NOUN = _words(*_DEVICE_NOUNS)
#: Any one device noun, for patterns that put it beside other words.
_ANY_DEVICE = "|".join(_DEVICE_NOUNS)
DEVICE_VERB = (
    r"\b(?:turn|switch|power|flip|shut)\b.*\b(?:on|off|up|down)\b"
    # "put the heating on", not "put a stop on my account": on/off here ends the phrase or a clause.
    r"|\b(?:put|set|keep|leave)\b.*\b(?:on|off)\b(?! (?:my|the|a|an|your|our|his|her|their|this|that)\b)"
    r"|\b(?:turn|switch|power|flip|shut|shutdown|cut) (?:on|off|down|up)\b"
    r"|\b(?:dim|brighten|lighten|darken|illuminate|unlock|lock|toggle|arm|disarm|"
    r"mow|mowing|vacuum|vacuuming|watering|preheat|brew|transition to)\b"
    r"|^(?:\w+ ){0,3}(?:on|off)$|\breturn (?:to )?(?:the )?(?:base|dock|charger)\b"
    # "crank the heat up", "knock the heating back a touch".
    r"|\b(?:crank|whack|knock|bump|dial|nudge|pump|bring)\b.*\b(?:up|down|back)\b"
)
# Verbs that also open apps and start games: evidence only beside a device noun or a room.
WEAK_DEVICE_VERB = (
    r"\b(?:open|close|raise|lower|activate|deactivate|enable|disable|start|stop|pause|resume|"
    r"unpause|clean|cleaning|water|heat|cool|warm|run)\b"
)
# Rooms of a house: with a setting or an action they point at the devices there.
ROOM = _words(
    r"kitchen",
    r"bathroom",
    r"bedroom",
    r"living room",
    r"lounge",
    r"dining room",
    r"office",
    r"study",
    r"basement",
    r"cellar",
    r"attic",
    r"garage",
    r"hallway",
    r"hall",
    r"landing",
    r"nursery",
    r"playroom",
    r"porch",
    r"patio",
    r"terrace",
    r"balcony",
    r"garden",
    r"lawn",
    r"yard",
    r"pool",
    r"house",
    r"flat",
    r"apartment",
    r"room",
    r"upstairs",
    r"downstairs",
    r"(?:first|second|ground|top|upper|lower) floor",
)
LONG_QUESTION = r"^(?:what|which|who|where|when|why|how)\b(?:\W+\w+){9,}"
LEVEL_CHANGE = (
    r"\b(?:brighter|dimmer|darker|lighter|warmer|cooler|hotter|colder|louder|quieter)\b"
    r"|\b(?:too|very|so) (?:dark|bright|hot|cold|warm|chilly|stuffy)\b|\bpitch (?:black|dark)\b"
    # How it feels, said as a complaint ("I'm freezing", "it's getting chilly in the hallway"): about the
    # heat or the lights, so the model answering gets the device tools.
    r"|\b(?:i'?m|i am|it'?s|it is|getting|feeling|we'?re)(?: so| really| very| a bit| a little| quite|"
    r" pretty)* (?:cold|freezing|chilly|hot|boiling|roasting|sweltering|stuffy|gloomy|pitch black)\b"
    # "it's freezing in chicago" is the weather's; "in here", "in the hallway" are the home's.
    r"(?! (?:in|at) (?!(?:here|the|my|our|this)\b)\w+)"
    r"|\b(?:increase|decrease|raise|lower|reduce|boost|adjust|change|set|make)\b.*"
    r"\b(?:brightness|light|lights|lighting|temp|temperature|heat|heating|level|colou?r|"
    r"fan|speed|volume)\b"
    r"|\b(?:colou?r temperature|kelvin|[1-9]\d{3} ?k|warm white|cool white)\b"
    r"|\b(?:red|green|blue|yellow|purple|pink|orange|white|violet|cyan|magenta)\b"
    r".*\b(?:light|lights|lighting|lamp|bulb)\b"
    r"|\b(?:change|make|set|turn|switch)\b.*\bcolou?r\b|\bcolou?r (?:of|in|at) .* to\b"
    r"|\b(?:to|make|turn|set|change)\b.*\b(?:red|green|blue|yellow|purple|pink|orange|white|violet|"
    r"cyan|magenta)$"
    r"|\b\d+ ?(?:%|percent)"
    # "it's freezing, warm it up to 22": how warm it feels or the heat, and a number to go to.
    r"|\b(?:cold|freezing|chilly|hot|boiling|stuffy|warm|heat|cool)\b.*\b(?:up|down) to \d{1,2}\b"
    r"(?!\s*(?:%|percent|minutes?|seconds?|hours?|days?|weeks?|months?|years?|times?|people|guests)\b)"
)
_STATE_WORD = (
    r"(?:on|off|open|opened|opening|closed|closing|shut|locked|unlocked|running|triggered|detected|"
    r"connected|plugged in|charging|low|hot|cold|armed|disarmed|available|active|idle|home|at home)"
)
# "a limit on my card", "is my flight on time", "anything on the 5th": a preposition, not a state.
_NOT_A_STATE = (
    r"(?! (?:my|your|our|his|her|their|a|an|time|schedule|sale|(?:the )?\d+(?:st|nd|rd|th)?|monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday)\b)"
)
DEVICE_STATE = (
    r"^(?:is|are|was|were|did|does|do|has|have)\b.*\b"
    + _STATE_WORD
    + r"\b"
    + _NOT_A_STATE
    + r"|\b(?:which|what|how many|any|all)\b.*"
    + DEVICE_NOUN
    + r".*\b"
    + _STATE_WORD
    + r"\b"
    r"|\b(?:which|what|how many|any)\b.*\b(?:things?|stuff|everything)\b.*\b" + _STATE_WORD + r"\b"
    r"|\b(?:state|status) of\b"
    # "what's the thermostat set to", "what's the heating reading".
    r"|\b(?:thermostat|heating|heater)\b.*\b(?:set (?:to|at)|reading|showing|says?)$"
    r"|\b(?:humidity|occupancy|motion|smoke|leak|co2|carbon monoxide|moisture|batter(?:y|ies)|"
    r"power usage|energy usage|consumption|rainfall|voltage|wattage|power factor|apparent power|"
    r"stored energy|air quality|aqi|illuminance|lux|download speed|updates? available)\b"
    r"|\b(?:anyone|anybody|someone|somebody|people|who) (?:is |are )?(?:at )?home\b"
    r"|^(?:is|are) (?:anyone|anybody|someone|somebody)\b"
    r"|\b(?:indicated|measured|reported|detected) by\b|\b(?:pm ?\d+(?:\.\d)?|ozone|particulates?|"
    r"irradiance|wet|flooded|flooding|vibrating|solar production)\b"
)
# Asking for the states of several devices as a list, a report or an overview ("give me a status
# report of the lights", "list everything that's on", "what's on right now in the house").
_HOME_WIDE = (
    r"devices?|appliances?|(?:the|my|our|whole|entire) (?:house|home|flat|apartment)"
    r"(?! (?:loans?|prices?|values?|insurance|market|sales?|equity|team|games?|run|address))"
)
_REPORT_WORD = (
    r"status|state|states|report|summary|summari[sz]e|overview|rundown|run ?down|run through|round ?up"
)
_NOW = r"(?: (?:right now|now|at the moment|currently))?"
_SOME_DEVICES = r"(?:" + _ANY_DEVICE + r")s?\b"
_REPORTS = (
    _either(_REPORT_WORD, _ANY_DEVICE + r"|" + _HOME_WIDE)
    + r"|\b(?:update|updates) (?:on|of|about) (?:the |my |all (?:the |my )?)(?:\w+ )?"
    + _SOME_DEVICES
    + r"|\b(?:list|show|tell|name|read)\b(?: me)?(?: (?:out|off|all|every|each|which|what|of|on))*"
    r"(?: (?:the|my|our))? (?:\w+ )?"
    + _SOME_DEVICES
    # "check my brake light" is the car's; "check all the locks" asks after several of the home's.
    + r"|\bcheck (?:on )?(?:all|every|each|which|what|whether|if)\b.*\b"
    + _SOME_DEVICES
    # "what's on", "what is open upstairs", "what's running in the house right now".
    + r"|\bwhat(?:'?s| is| are)? (?:still |currently |now |left )?(?:on|open|running|unlocked|switched on|"
    r"turned on|left on|plugged in)"
    + _NOW
    + r"(?: (?:in|at) (?:the |my )?\w+(?: room)?| (?:upstairs|downstairs|inside))?"
    + _NOW
    + r"$|\b(?:anything|everything|something|stuff) (?:still |left |turned |switched )?"
    r"(?:on|off|open|unlocked|running)(?: (?:right now|now|at home|in the house|in here|inside|upstairs|"
    r"downstairs))?$"
    r"|\bhow(?:'s| is| are) (?:the |my |all (?:the |my )?)(?:\w+ )?" + _SOME_DEVICES + r"(?: doing)?$"
    r"|\b(?:status|state|report|summary|overview|rundown) (?:of|on|for) (?:everything|all)"
    r"(?: (?:in the house|at home|right now|now))?$"
    r"|\b(?:list|show|tell|give|read)\b.*\b(?:everything|anything|all|things|stuff|what|which)\b.*"
    r"(?<!going )(?<!carry )\b(?:on|off|open|running|unlocked|locked|closed)$"
)
# Never a timer, the calendar, a flight, an order or an account ("status of my order").
DEVICE_REPORT = (
    r"^(?!.*\b(?:timers?|alarms?|reminders?|calendar|flights?|orders?|accounts?)\b).*(?:" + _REPORTS + ")"
)
MEDIA_CONTROL = (
    r"\b(?:pause|unpause|resume|continue|restart|mute|unmute|skip)\b.*\b(?:music|audio|playing|song|"
    r"track|speaker|tv|media|player|podcast|radio)\b|\bplay(?:ing)? again\b|\b(?:continue|resume) "
    r"playing\b|\bvolume\b|\b(?:playing|paused|stopped)\b.*\b(?:player|speaker|tv)\b"
)
IN_HERE = r"\bin here\b|\b(?:it'?s|too|so|getting) (?:dark|gloomy|dim)\b|\bdarkness\b|\bset the mood\b"
# Temperature is a device reading in a room, and a web question about a place or the outdoors.
INDOOR_TEMPERATURE = (
    r"\b(?:temp|temperature|degrees?|°)\b(?!.*\b(?:outside|outdoors?|forecast|tomorrow|tonight|"
    r"weekend|week)\b)"
    r"|\bhow (?:warm|hot|cold|cool|humid) is (?:it (?:in )?here|it inside|it in the house|(?!it\b)[\w ]+$)"
    r"|^how (?:warm|hot|cold|cool) is it$"
)
OUTDOOR = (
    # "the outside light", "every outdoor lamp": a device outdoors, not the weather.
    r"\b(?:outside|outdoors?|out there)\b(?! (?:lights?|lamps?|lighting|doors?|plugs?|sockets?|outlets?|"
    r"fans?|heaters?|sprinklers?|cameras?|speakers?)\b)"
    r"|\b(?:temperature|degrees|hot|cold|warm|cool|humid|humidity|sticky|nice|climate)\b.*"
    r"\b(?:today|tonight|tomorrow|this (?:week|weekend|morning|afternoon|evening)|next week)\b"
    r"|\b(?:tomorrow|tonight)\b.*\b(?:temperature|degrees|hot|cold|warm|nice)\b"
    r"|\b(?:is it going to|will it|is it gonna) be\b|\bclimate\b"
    r"|\b(?:how (?:hot|cold|warm)|temperature|degrees) (?:is it )?(?:in|at) (?!(?:here|the "
    r"(?:house|room|kitchen|bedroom|bathroom|office|basement|attic|garage|hall|hallway)))\w+"
    # Humidity in a room is a sensor's; in a place ("humidity in seattle") it is the weather's.
    r"|\b(?:humid(?:ity)?|air quality|aqi|rainfall|pollution|smog|pollen count)(?: levels?)?(?: like)?"
    r"(?: is it)? (?:in|at|for|around|near) (?!(?:here|there|the|my|"
    r"our|this|that|every|each|all|inside|indoors|upstairs|downstairs)\b)(?!" + ROOM + r")\w+"
)

TIMER = _words(
    r"timers?",
    r"alarms?",
    r"count ?down",
    r"stopwatch",
    r"snooze",
    r"calendar",
    r"agenda",
    r"appointments?",
    r"meetings?",
    r"events?",
    r"(?<!on )(?<!of )(?<!behind )schedule",  # "is my flight on schedule" is the flight's
    r"scheduled",
    r"rescheduled?",
    r"diary",
    r"planner",
)
# Asking to be told later outweighs what the reminder is about ("remind me to send the email").
REMIND = (
    r"\bremind(?:er|ers)?\b|\bremaind(?:er)?\b|\bremainder\b|\bwake me\b|\bwake up call\b"
    r"|\bget me up\b|\bremember to\b|\bdon'?t let me forget\b|\bnotify me\b|\balert me\b"
    r"|\bset (?:an? )?(?:alert|notification|alarm|timer)\b|\bremember (?:that|my)\b"
    r"|\blet me know (?:in|at|when it'?s|when it is)\b|\btell me when it(?:'s| is)\b"
)
# Asking outright to be reminded (not "notify me if ...", which is about an event, not a time).
REMIND_ME = r"\bremind(?:er|ers)?\b|\bremaind(?:er)?\b|\bremainder\b|\bdon'?t let me forget\b"
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|weekday)s?"
_MONTH = (
    r"(?:january|february|march|april|june|july|august|september|october|november|december|"
    r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)"
)
_ORDINAL = (
    r"(?:\d{1,2}(?:st|nd|rd|th)|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|"
    r"eleventh|twelfth|\w+teenth|twentieth|thirtieth|(?:twenty|thirty)[ -]?(?:first|second|third|"
    r"fourth|fifth|sixth|seventh|eighth|ninth))"
)
# Stretches of one's time that a calendar answers for ("is my afternoon free").
_DAYPART = (
    r"day|week|weekend|morning|afternoon|evening|night|schedule|calendar|diary|agenda|month|today|"
    r"tomorrow|tonight|" + _WEEKDAY
)
# When, in a question about plans: a day, a part of one, or a date.
_WHEN = (
    _WEEKDAY
    + r"|today|tonight|tomorrow|later|(?:this|next|the rest of the) (?:\w+)|the \d+(?:st|nd|rd|th)?|"
    + _MONTH
    + r"|(?:at )?\d{1,2}(?::\d\d)? ?(?:am|pm)?"
)
# Putting something on a day or at an hour: a calendar entry.
CALENDAR_ACTION = (
    r"\b(?:add|set|mark|cancel|delete|remove|block|put|book|plan|move|flag|create|clear|note)\b.*"
    r"(?:\b" + _WEEKDAY + r"\b|\b" + _MONTH + r"\b|\b(?:tomorrow|tonight|today|next week|every (?:day|"
    r"week|month|year|morning|evening)|" + _ORDINAL + r")\b|\b(?:am|pm|a m|p m|noon|o'clock)\b)"
)
DELAY = (
    r"\b(?:in|after|for) (?:\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|fifteen|"
    r"twenty|thirty|forty|forty five|sixty|ninety|half an?|a couple of|a few) (?:and a half )?"
    r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?)\b"
    r"|\b(?:at|by) (?:\d{1,2}(?::\d\d)?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
    r"twelve|noon|midnight)(?: ?(?:am|pm|a m|p m|o'clock|oclock))?\b(?! ?(?:%|percent|per cent|degrees?|°))"
    r"|\b(?:tonight at|every (?:day|morning|evening|night|weekday)|tomorrow morning)\b"
)

# The clock and the calendar date, asked outright.
DATETIME = (
    r"\btime (?:is it|now|right now|please)\b|\bwhat time\b|\bcurrent(?:ly)? time\b|\btime in\b"
    r"|\b(?:tell|give|show|say|let) me the (?:time|date|hour|day)\b|\b(?:present|local|exact) time\b"
    r"|\b(?:date|day) (?:is it|today)\b|\btoday'?s date\b|\bwhat (?:is )?today\b|\btoday is which\b"
    r"|\bis (?:it|today) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
    r"|\bwhat(?:'s| is)? (?:the )?(?:current )?(?:time|date|day|month|year|week)\b"
    r"|\bwhich (?:day|date|month|year)\b"
    r"|\bday of the (?:week|month|year)\b|\btime zone\b"
    r"|^(?:the )?(?:time|date)$"
    r"|\b(?:today|tomorrow|yesterday)'?s date\b|\bwhat date (?:is it|it is|will it be|was it)\b"
    r"|\bo'? ?clock (?:yet|already)\b"
)
# Weaker: calendar arithmetic and questions that mention days or dates.
DATETIME_WEAK = (
    r"\b(?:what|which) day (?:is|was|will|does|falls?)\b|\bhow many (?:days|weeks|months|\w+days) "
    r"(?:until|till|to|left|are|in)\b|\bon (?:a|which) (?:monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday)\b|\b(?:is it|what time of) (?:the )?(?:morning|afternoon|evening|night)\b"
    r"|\b(?:afternoon|morning|evening) yet\b|\bwhen is (?:the )?next\b|\b(?:date|day) of\b"
    r"|\bis (?:it|today) (?:the )?\w+(?:st|nd|rd|th)\b"
)

WEB = (
    _words(
        r"weather",
        r"forecast",
        r"rain",
        r"raining",
        r"rainy",
        r"snow",
        r"snowing",
        r"snowy",
        r"sunny",
        r"cloudy",
        r"overcast",
        r"storms?",
        r"stormy",
        r"thunder(?:storm)?",
        r"windy",
        r"fog",
        r"foggy",
        r"hail",
        r"humid(?!(?: is it)? (?:in here|inside|indoors|in the house))",
        r"umbrella",
        r"raincoat",
        r"jacket",
        r"sweater",
        r"coat",
        r"sunglass(?:es)?",
        r"sunscreen",
        r"sandals",
        r"shorts",
        r"pollen",
        r"uv index",
        r"sun ?rise",
        r"sun ?set",
        r"news",
        r"headlines?",
        r"stocks?",
        r"shares?",
        r"stock market",
        r"markets?",
        r"dow jones",
        r"nasdaq",
        r"s ?& ?p",
        r"exchange rates?",
        r"currency",
        r"dollars?",
        r"euros?",
        r"pounds? sterling",
        r"rupees?",
        r"yen",
        r"bitcoin",
        r"crypto(?:currency)?",
        r"traffic",
        r"commute",
        r"elections?",
        r"polls?",
        r"price of",
        r"prices?",
        r"worth",
        r"opening hours",
        r"open (?:today|now|until)",
        r"box office",
        r"showtimes?",
        r"trending",
        r"happening",
        r"going on",
    )
    # "how hot is it" alone is the home's thermometer (indoor_temperature); outdoors it is the web's.
    + r"|\bhow (?:hot|cold|warm) will it\b|\bwill it be (?:hot|cold|warm|nice|sunny|rainy)\b"
    r"|\b(?:do|will|should) i (?:need|take|bring|wear)\b|\bwhat'?s it like out\b"
    r"|\b(?:latest|newest|recent|current|breaking) (?:on|about|from|in|updates?|developments?|news|"
    r"stories|articles?|headlines?)\b|\b(?:top stories|front page|articles?|updates? on)\b"
    r"|\bstock (?:price|rate|value)\b|\btrading at\b"
    r"|\bconvert\b.*\b(?:dollars?|euros?|pounds?|rupees?|yen|usd|eur|gbp|inr)\b"
    r"|\b(?:usd|eur|gbp|inr|jpy)\b"
)

SPORTS = _words(
    r"scores?",
    r"league",
    r"premier league",
    r"nba",
    r"nfl",
    r"mlb",
    r"nhl",
    r"fifa",
    r"world cup",
    r"playoffs?",
    r"tournament",
    r"match",
    r"game",
    r"won",
    r"win",
    r"results?",
    r"standings",
    r"fixtures?",
)
SEARCH = (
    r"\b(?:search|google|bing|duckduckgo|wikipedia|look up|find out|browse|website|online|internet|web)\b"
)
# A trip under way: where a flight, train or bus is now, and what a border or an airline asks today.
# Booking one is not ("book a flight that leaves at 6": no tool of ours books anything).
_CARRIER = (
    r"(?:flights?|planes?|trains?|bus|buses|ferry|ferries|trams?|subway|metro|underground|tube|airlines?|airways|"
    r"(?:united|delta|american|southwest|jetblue|alaska|spirit|frontier|hawaiian) (?:airlines?|flight|\d+)|"
    r"lufthansa|ryanair|easyjet|british airways|air france|klm|emirates|qantas|air canada|aer lingus|"
    r"iberia|westjet|qatar airways|etihad|turkish airlines|virgin atlantic|"
    r"(?:aa|ua|dl|wn|b6|nk|f9|ba|af|lh|kl|ek|qf|ei|ib|vs|u2|tk|qr|ey|sq|cx|nh|jl|lx|fr) ?\d{1,4})"
)
_TRIP_STATE = (
    r"(?:delay(?:s|ed)?|late|on time|on schedule|cancell?ed|cancell?ations?|land(?:ed|s|ing)?|"
    r"arriv(?:e|es|ed|al|ing)|depart(?:s|ed|ure|ing)?|take off|taken off|took off|taking off|status|"
    r"gate|terminal|boarding|track|diverted|leaves?|leaving|left|strikes?|disruptions?|running|due|"
    r"expected|come|coming)"
)
#: Where a flight, train or bus is now.
_TRIP_NOW = (
    r"(?:"
    + _either(_CARRIER, _TRIP_STATE)
    + r"|\b(?:next|last) (?:flight|plane|train|bus|ferry|tram|subway)\b"
    r"|\b(?:when|where)(?:'s| is) (?:my|our|the) (?:next )?(?:flight|plane|train|bus|ferry)\b"
    r"|\b(?:flight|plane|train|bus)\b.*\bget(?:s|ting)? in\b)"
)
TRAVEL = (
    r"^(?!.*\b(?:book|reserve|buy|purchase|cheap|cheapest|fares?|tickets?|find me|search for)\b).*"
    + _TRIP_NOW
    + r"|"
    + _either(
        r"airports?|o'?hare|jfk|lax|heathrow|gatwick|sfo",
        r"busy|delays?|wait|waiting|lines?|queues?|security|crowded|closed|status",
    )
    + r"|\btravel (?:alerts?|warnings?|advisor(?:y|ies)|bans?|restrictions?|notices?|requirements?|rules?)\b"
    r"|\b(?:safe|dangerous|unsafe|risky) (?:to |for \w+ to )?(?:travel|visit|fly)\b"
    r"|\bsafe for (?:tourists|travell?ers|americans|visitors|foreigners)\b"
    r"|\b(?:alerts?|warnings?|advisor(?:y|ies)|restrictions?|bans?) (?:for|on|about|when) "
    r"(?:travell?ing|travel|visiting|going to|trips? to)\b"
    r"|\b(?:safe|dangerous|unsafe|risky) (?:to )?go to\b"
    r"|\b(?:can|should|may) (?:i|we|\w+ citizens|\w+ns|tourists) (?:travel|fly) to\b"
    r"|\b(?:need|get|require|requires|required|apply for) (?:a |an )?(?:\w+ )?visas?\b"
    r"|\bvisas? (?:requirements?|rules?|for|to|on arrival|needed|required|policy|waiver)\b"
    r"|\b(?:without|with) (?:a |an )?(?:\w+ )?visas?\b(?! card)"
    r"|\b(?:entry|passport|border|customs|quarantine|covid|travel) (?:requirements?|rules?|restrictions?|"
    r"closures?)\b"
    r"|\b(?:baggage|luggage|carry ?-?ons?|checked bags?|suitcases?|bags?)\b.*\b(?:allowance|allowed|"
    r"limits?|fees?|weight|size|dimensions|policy|can i (?:bring|take|carry))\b"
    r"|\bhow (?:many|heavy|big|large) (?:can )?(?:my )?(?:bags|baggage|luggage|carry ?-?ons|suitcases?)\b"
    r"|\b(?:a|my|the|how many|of) carry ?-?ons?\b(?! (?:playing|with|the)\b)"
    r"|\bcarry ?-?on (?:bags?|luggage|baggage|limit|allowance|rules?|policy|size)\b"
    r"|\bcheck(?:ed|ing)? (?:a |my |two |three |\d+ )?(?:bags?|suitcases?|luggage)\b"
)
# Warnings and alerts about the world outside: fresh information.
ALERT = (
    r"\b(?:weather|storm|tornado|hurricane|flood|tsunami|heat|travel|air quality|severe|fire|avalanche|"
    r"wind|snow|ice|frost|smog) (?:alert|warning|advisory|watch)(?:es|s)?\b"
    r"|\b(?:tornado|hurricane|earthquake|wildfire|blizzard|heatwave|heat wave)s?\b"
)
# Asking about now or lately: what a web search is for.
FRESH = (
    r"\b(?:today|tonight|yesterday|last night|this (?:week|weekend|morning|evening)|right now|"
    r"currently|at the moment|lately|latest|tomorrow|next week)\b"
)
# History and trivia are knowledge, not news.
HISTORY = r"\b(?:in|since|of|from|before|after) (?:1[0-9]|20)\d\d\b|^(?:who|what|which) (?:was|were)\b"

# Requests we have no tool for: mail, messages, social media, lists, music, calls, shopping, notes.
COMMUNICATION = _words(
    r"e-?mails?",
    r"mail",
    r"inbox",
    r"messages?",
    r"texts?",
    r"sms",
    r"whatsapp",
    r"facebook",
    r"twitter",
    r"tweets?",
    r"instagram",
    r"linkedin",
    r"social media",
    # "post a status update"; "a status update on the lights" asks for the devices' states.
    r"status update(?! (?:on|of|for|about) (?:the|my|all|every)\b)",
    r"contacts?",
    r"phone ?book",
)
GENERAL_DOMAIN = (
    _words(
        r"posts?",
        r"call",
        r"dial",
        r"ring",
        # A list to keep; "list the lights that are on" asks for a report.
        r"lists?(?! (?:all|every|each|the|my|our|which|what|everything|anything)\b)",
        r"to ?do",
        r"chores?",
        r"shopping",
        r"groceries",
        r"cart",
        r"order",
        r"amazon",
        r"wishlist",
        r"notes?",
        r"songs?",
        r"music",
        r"playlists?",
        r"album",
        r"artist",
        r"podcasts?",
        r"audiobooks?",
        r"radio",
        r"spotify",
        r"jokes?",
        r"recipes?",
        r"takeaway",
        r"uber",
        r"taxi",
        r"ticket",
    )
    + r"|\bplay\b.*\b(?:game|chess|crossword|quiz|trivia|cards)\b|\bgame of\b"
)
# One's money and accounts: no tool of ours sees them. A device or price word inside ("a limit on my
# card", "lock my debit card", "200 dollars to savings") makes them neither a device nor the news.
MONEY = (
    _words(
        r"(?:credit|debit|atm|bank|gift|prepaid|rewards?|store|visa|discover|chase|amex) cards?",
        r"master ?card",
        r"amex",
        r"american express",
        r"capital one",
        r"(?:bank|checking|savings|brokerage|retirement|joint|current) accounts?",
        r"accounts?",
        r"(?<!power )(?<!river )banks?",
        r"banking",
        r"credit (?:limit|score|report|line|rating|history|union)",
        r"(?:spending|withdrawal|daily|card) limit",
        r"(?:my|our) (?:\w+ )?limit",
        r"take ?home pay",
        r"balances?",
        r"transactions?",
        r"(?:card|recent|last) purchases?",
        r"statements?",
        r"(?:routing|account|card|pin) number",
        r"pin(?: code)?",
        r"apr",
        r"interest(?: rates?)?(?!.*\b(?:today|right now|currently|this week|lately)\b)",
        r"overdra(?:ft|wn)",
        r"direct deposit",
        r"pay ?checks?",
        r"pay ?day",
        r"pay ?stubs?",
        r"salary",
        r"wages?",
        r"income",
        r"tax(?:es)?",
        r"w ?2",
        r"1099",
        r"401 ?k",
        r"ira",
        r"pension",
        r"mortgage(?!.*\b(?:today|right now|currently|this week|lately)\b)",
        r"loans?",
        r"debts?",
        r"(?:reward|rewards|loyalty|credit card) (?:points|miles)",
        r"pto",
        r"(?:vacation|sick|personal|paid) (?:days|time|leave)",
        r"time off",
        r"cash ?back",
        r"bills?",
        r"(?:minimum|monthly|card|loan|rent|mortgage) payments?",
        r"(?:annual|foreign transaction|overdraft|late|atm|card|account|bank|transfer) fees?",
        r"fraud(?:ulent)?",
        r"net worth",
        r"budget",
        r"(?<!daylight )(?<!energy )savings",
        r"(?:my|from|to|into) checking",
        r"checkbook",
        r"cheque(?:book|s)?",
        r"chequing",
        r"receipts?",
        r"withdraw(?:al|als|n)?",
        r"deposits?",
        r"rent (?:payment|due|paid)",
        r"(?:new|order) checks",
        r"insurance",
        r"paypal",
        r"venmo",
        r"zelle",
    )
    + r"|\b(?:my|our) (?:\w+ )?cards?\b|\bmy visa\b(?! (?:for|to|application|requirements?)\b)"
    r"|\b(?:my|much|send|transfer|wire|move) (?:money|cash|funds)\b|\b(?:a|make a|wire|bank) transfer\b"
    r"|\btransfer \$?\d|\bpay (?:my|the|off|for|a|an|\d)\b|\bget paid\b|\bspen(?:d|t|ding)\b"
    r"|\b(?:charges?|charged) (?:on|to) (?:my|the|our)\b|\bcharges\b"
    r"|\b(?:do|did) (?:i|we) (?:owe|earn|make)\b"
    r"|\bhow much (?:do|did|will) (?:i|we) (?:owe|earn|make|have)\b"
)
# Bookings and availability: no tool of ours books anything, and a date in them is no timer.
BOOKING = (
    r"\b(?:tickets?|reservations?|reserve|hotels?|airbnb|check(?:ing)? ?(?:in|out)|table for|"
    r"rent(?:al)? (?:a )?car|seats? (?:for|on|at))\b|\bbook (?:a|an|me|us|the|my|two|three|four)\b"
    # A flight is a booking unless the question is where it is now ("is my flight delayed": travel).
    r"|^(?!.*" + _TRIP_NOW + r").*\bflights?\b"
)
# Asking how to do something: knowledge, not news.
HOW_TO = (
    r"^(?:how (?:can|do|should|would|could|to) (?:i|we|you|one)?|how to|what(?:'s| is) the best way to)\b"
    r"|\b(?:tips|advice|steps) (?:for|on|to)\b"
)
# Asking what is on one's calendar: a calendar request (timer), not small talk.
CALENDAR_QUESTION = (
    r"\b(?:am i|are we)(?: \w+)? (?:free|available|busy|booked|open)\b"
    r"|\bis \w+ (?:free|available|busy|booked)\b"
    r"|\b(?:if|whether|when) (?:i'm|i am|we're|we are)(?: \w+)? (?:free|available|busy|booked|open)\b"
    r"|\bis (?:\d{1,2}(?: \d\d)?(?: ?(?:am|pm|o'clock))?|noon) (?:free|open|available|taken)\b"
    r"|\bhave (?:i |we )?(?:got )?(?:any |some )?(?:free |spare )?time "
    r"(?:on|at|this|next|tomorrow|today|tonight)\b"
    r"|\bwhat(?:'?s| is| does| do)? (?:on )?my (?:day|week|weekend|morning|afternoon|evening|"
    + _WEEKDAY
    + r"|"
    + _MONTH
    + r"|schedule|calendar)\b.*\b(?:look|like|have|hold)\b"
    r"|\bwhat do (?:i|we) have (?:on(?! (?:my|the|our) (?:\w+ )?(?:list|to do|cart|plate))|going on|planned|"
    r"scheduled|booked|today|tomorrow|this|next)\b"
    r"|\bdo (?:i|we) have (?:anything|something|plans) (?:on(?= (?:for |at )?(?:"
    + _WHEN
    + r")\b| ?$)|planned|"
    r"scheduled|today|tomorrow|this|next)\b"
    # Availability, said of oneself or of a stretch of one's time ("is my afternoon open").
    r"|\bhow (?:free|busy|booked|packed) (?:am i|are we|is my)\b"
    r"|\bis (?:my|our) (?:\w+ )?(?:" + _DAYPART + r")\b(?: \w+)? (?:free|available|busy|booked|open|clear|"
    r"empty|packed|full)\b"
    r"|\bis (?:" + _WEEKDAY + r"|tomorrow|today)(?: (?:morning|afternoon|evening|night))? (?:free|open|"
    r"available|busy|booked)\b"
    r"|\b(?:any|my next|the next|next) (?:free|open|spare) (?:time|slots?|spots?|hours?)\b"
    r"|\bdoes (?:" + _WEEKDAY + r"|tomorrow|today)(?: \w+)?(?: at \d+)? work(?: for (?:me|us))?$"
    r"|\b(?:my|our) (?:availability|commitments|engagements)\b|\bon my plate\b"
    # "what does friday look like", "how's next week looking": a stretch of one's time, not the sky.
    r"|^(?!.*\b(?:weather|forecast|outside|rain|snow|temperature|sky|traffic|sunny)\b).*\b(?:what|how)"
    r"(?:'?s| is| does| do| will)? (?:the rest of |my |our |this |next |the )*(?:" + _DAYPART + r")\b"
    r"(?: \w+)?(?: \w+)? (?:look(?:s|ing)?|shaping up|shape up)\b"
    r"|\b(?:what am i|what are we|am i|are we) (?:doing|up to)\b.*\b(?:" + _WHEN + r")\b"
    r"|\b(?:do|have|did|will) (?:i|we) (?:have |got |have got )(?:any(?:thing)? |something |some |nothing )?"
    r"(?:on(?= (?:for |at )?(?:"
    + _WHEN
    + r")\b| ?$)|planned|scheduled|booked|lined up|going on|happening|plans|"
    r"commitments?|engagements?|appointments?|events?)\b"
    r"|\b(?:any|my|our|what) plans (?:for |on |at )?(?:" + _WHEN + r")\b"
    r"|\banything (?:on|planned|scheduled|booked|happening|going on|lined up) (?:for |on |at )?(?:"
    + _WHEN
    + r")\b"
    r"|\bwhat(?:'?s| is| are)? (?:on|planned|scheduled|booked|lined up) (?:for |on )?(?:me |us )?(?:"
    + _WHEN
    + r")\b"
    r"|\bcoming up (?:for me|for us|on my|in my)\b|\b(?:i|we) (?:have|got) coming up\b"
    r"|\b(?:what(?:'?s| is)|anything) coming up(?: (?:today|tomorrow|this week|next week|later))?$"
)
QUESTION_KNOWLEDGE = (
    r"^(?:who|whom|whose|why|where|define|explain|spell|translate|calculate)\b"
    r"|^(?:what|which|how) .*\b(?:is|are|was|were|do|does|did)\b"
    r"|^what (?:is|are|was|were|does|do) (?:a|an|the)\b(?!.*\b(?:temperature|time|date|weather|"
    r"forecast|score|price)\b)"
    r"|\b(?:meaning of|definition of|capital of|how many \w+ (?:in|are in) a)\b"
)
